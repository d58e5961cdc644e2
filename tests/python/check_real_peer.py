#!/usr/bin/env python3
"""tests/python/check_real_peer.py: `python -m validator PKG...` on real packages (Debian's
NumPy, PyTorch). The peers' own non-conformance must not fail the test, so it checks that
the run completes (exit 0 or 1, a complete record, no harness `error`), that every subject
is a Python subject with the Python-protocol cases run, and facts probed independently here:
a package whose __dlpack__ rejects max_version is reported legacy-only, and the versioned
cases are then skips naming that reason, never failures."""
import argparse
import importlib
import json
import subprocess
import sys


def accepts_max_version(pkg):
    mod = importlib.import_module(pkg)
    x = mod.zeros(3) if hasattr(mod, "zeros") else None
    try:
        x.__dlpack__(max_version=(1, 0))
        return True
    except TypeError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("packages", nargs="+")
    a = ap.parse_args()
    cmd = [sys.executable, "-m", "validator", "--json", a.out] + a.packages
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    problems = []
    if p.returncode not in (0, 1):
        problems.append(f"exit code {p.returncode}: {p.stderr.strip()[:800]}")
        print("\n".join("PROBLEM: " + x for x in problems))
        return 1
    rec = json.load(open(a.out))
    if not rec.get("complete"):
        problems.append("the run record is not complete")
    if len(rec["subjects"]) != len(a.packages):
        problems.append(f"{len(rec['subjects'])} subjects for {len(a.packages)} packages")
    for i, pkg in enumerate(a.packages):
        s = rec["subjects"][i]
        if s["kind"] != "python" or not s["name"].startswith(pkg + " "):
            problems.append(f"subject {i} is {s['kind']} {s['name']!r}, expected python {pkg}")
        legacy = not accepts_max_version(pkg)
        if s["legacy_only"] != legacy:
            problems.append(f"{pkg}: legacy_only {s['legacy_only']}, but __dlpack__ "
                            f"{'rejects' if legacy else 'accepts'} max_version here")
        mine = [r for r in rec["results"] if r["subject"] == i]
        if not any(r["id"].startswith("python.") for r in mine):
            problems.append(f"{pkg}: no Python-protocol case ran")
        for r in mine:
            if r["status"] == "error":
                problems.append(f"{pkg}: {r['id']} ended in a harness error: {r['message']}")
            if legacy and r["id"] in ("python.capsule.name.versioned", "producer.version.major.versioned"):
                if r["status"] != "skip" or "legacy" not in r["message"]:
                    problems.append(f"{pkg}: {r['id']} is {r['status']} ({r['message']}), expected a "
                                    f"skip naming the legacy-only protocol")
            # KW-03 is asked of legacy producers too: Debian's NumPy 1.24 and PyTorch 1.13 have
            # no copy= keyword, which the skip names (a probed fact).
            if legacy and r["id"] == "python.kw.copy_true":
                if r["status"] != "skip" or "copy=" not in r["message"]:
                    problems.append(f"{pkg}: {r['id']} is {r['status']} ({r['message']}), expected a "
                                    f"skip naming the missing copy= keyword")
    want = 1 if rec["summary"]["unexpected"] else 0
    if p.returncode != want:
        problems.append(f"exit code {p.returncode} but {rec['summary']['unexpected']} unexpected results")
    for x in problems:
        print("PROBLEM:", x)
    print(p.stdout.splitlines()[-1] if p.stdout else "(no output)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
