#!/usr/bin/env python3
"""tests/soak/load_stability.py: one verdict per case, whatever the machine's load (docs/design.md §7).

Runs each subject twice with --deterministic --json: once on the machine as it is, once with
the CPUs oversubscribed FACTOR times (Debian's stress-ng, installed here with apt-get when
missing; Python spinners where it cannot be had), and compares the status of every case id.
Any difference is listed and the script exits 1. Prints, per subject, `identical N/N` and the
wall time of both runs.

  load_stability.py --validator BUILD/dlpack-validate [--python PY] [--factor 3]
                    [--timeout S] SUBJECT...
SUBJECT: a plugin (.so path, run by --validator) or a Python package name (run by
`PY -m validator`; PY defaults to this interpreter, and BUILD/python is put on PYTHONPATH)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


def ensure_stress_ng():
    if shutil.which("stress-ng"):
        return True
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for cmd in (["apt-get", "install", "-y", "-qq", "--no-install-recommends", "stress-ng"],
                    ["apt-get", "update", "-qq"],
                    ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "stress-ng"]):
            subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if shutil.which("stress-ng"):
                return True
    return False


class Load:
    """CPU hogs: FACTOR x the CPU count, until stopped."""

    def __init__(self, factor):
        self.n = max(1, factor * (os.cpu_count() or 1))
        self.procs = []

    def __enter__(self):
        if ensure_stress_ng():
            self.how = f"stress-ng --cpu {self.n}"
            self.procs = [subprocess.Popen(["stress-ng", "--cpu", str(self.n), "--quiet"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                           start_new_session=True)]
        else:
            self.how = f"{self.n} Python spinners (stress-ng could not be installed)"
            spin = "while True: pass"
            self.procs = [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True)
                          for _ in range(self.n)]
        time.sleep(0.5)  # let the hogs start before the measured run
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
            p.wait()


def run(args, subject, out):
    if subject.endswith(".so") or os.sep in subject:
        cmd = [args.validator, subject]
        env = dict(os.environ)
    else:
        cmd = [args.python, "-m", "validator", subject]
        env = dict(os.environ)
        shim = os.path.join(os.path.dirname(os.path.abspath(args.validator)), "python")
        env["PYTHONPATH"] = shim + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd += ["--deterministic", "--json", out, "-q"] + (["--timeout", str(args.timeout)] if args.timeout else [])
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(f"load_stability: {' '.join(cmd)} exited {p.returncode}: {p.stdout[-500:]}")
    rec = json.load(open(out))
    statuses = {}
    for r in rec["results"]:
        key = r["id"] + (f"@{r['subject']}->{r['peer']}" if r.get("peer") not in (None, -1) else "")
        statuses[key] = r["status"]
    for nr in rec.get("not_run", []):
        for c in nr.get("cases", []):
            statuses[c] = "not run"
    return statuses, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--factor", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=None, help="--timeout for the validator (default: its own)")
    ap.add_argument("subjects", nargs="+")
    args = ap.parse_args()
    failed = False
    with tempfile.TemporaryDirectory(prefix="dlpv-load-") as tmp:
        for i, s in enumerate(args.subjects):
            quiet, t_quiet = run(args, s, os.path.join(tmp, f"{i}-quiet.json"))
            with Load(args.factor) as load:
                busy, t_busy = run(args, s, os.path.join(tmp, f"{i}-busy.json"))
            ids = sorted(set(quiet) | set(busy))
            diff = [c for c in ids if quiet.get(c) != busy.get(c)]
            print(f"{s}: identical {len(ids) - len(diff)}/{len(ids)} "
                  f"(quiet {t_quiet:.1f} s; with {load.how}: {t_busy:.1f} s)")
            for c in diff:
                print(f"  DIFFERS {c}: quiet {quiet.get(c, 'absent')}, loaded {busy.get(c, 'absent')}")
            failed |= bool(diff)
    print("load_stability: verdicts differ under load" if failed else "load_stability: every verdict the same under load")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
