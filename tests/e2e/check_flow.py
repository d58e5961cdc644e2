#!/usr/bin/env python3
"""tests/e2e/check_flow.py: selection and flow options of a run: --exclude and --requirement
narrow the selection, -x stops at the first unexpected result and lists the rest once as not
run (a baseline that expects the failure does not stop it), --json - puts the record on stdout
and the summary on stderr, and a run that meets hangs says where it is while it runs."""
import argparse
import json
import os
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--failing", required=True, help="a mutant that fails some consumer cases")
    ap.add_argument("--hanging", required=True, help="a mutant whose importer never returns")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    v = a.validator
    problems = []

    def expect(ok, what):
        print(("ok: " if ok else "FAIL: ") + what)
        if not ok:
            problems.append(what)

    # --json -: stdout is exactly the record; the summary goes to stderr.
    rc, out, err = run([v, a.reference, "--filter", "consumer.roundtrip.*", "--exclude", "*.legacy", "--json", "-"])
    try:
        rec = json.loads(out)
    except ValueError:
        rec = None
    expect(rc == 0 and rec is not None, "--json - writes a parseable record on stdout")
    if rec:
        ids = [r["id"] for r in rec["results"]]
        expect(ids and all(i.endswith(".versioned") for i in ids), "--exclude '*.legacy' leaves out the legacy cases")
        expect(rec["options"].get("exclude") == ["*.legacy"], "the record names the exclusion")
    expect("verdict: PASS" in err, "with --json - the summary is on stderr")

    # --requirement: every selected case cites a matching requirement.
    rc, out, err = run([v, "--list", "--json", "-", "--requirement", "DEL-1?"])
    cases = json.loads(out) if rc == 0 else []
    expect(cases and all(any(q.startswith("DEL-1") for q in c["requirements"]) for c in cases),
           f"--requirement 'DEL-1?' selects only cases citing DEL-1x ({len(cases)})")

    # -x: one unexpected result, the rest listed once as not run.
    path = os.path.join(a.workdir, "x.json")
    rc, out, err = run([v, a.failing, "--filter", "consumer.*", "-x", "--json", path])
    rec = json.load(open(path))
    bad = [r for r in rec["results"] if r["status"] in ("fail", "crash", "timeout", "error")]
    expect(rc == 1 and len(bad) == 1 and bad[0]["id"] == rec["results"][-1]["id"],
           "-x: the run ends with its first unexpected result")
    expect(len(rec["not_run"]) == 1 and "--exitfirst" in rec["not_run"][0]["reason"], "-x: the rest is not run, once")
    # ... but a failure the baseline expects does not stop the run.
    base = os.path.join(a.workdir, "x.baseline")
    run([v, a.failing, "--filter", "consumer.*", "--write-baseline", base, "-q"])
    rc, out, err = run([v, a.failing, "--filter", "consumer.*", "-x", "--baseline", base, "--json", path])
    rec = json.load(open(path))
    expect(rc == 0 and not rec["not_run"], "-x with a baseline: expected failures do not stop the run")

    # Progress: a run with hangs says where it is (off a terminal a line every 10 s; here every
    # second, DLPV_PROGRESS_SECONDS=1, set by CTest).
    rc, out, err = run([v, a.hanging, "--filter", "consumer.roundtrip.float*", "--timeout", "0.6"])
    expect("progress:" in err and "running consumer.roundtrip." in err, "a run with hangs reports progress on stderr")
    rc, out, err = run([v, a.hanging, "--filter", "consumer.roundtrip.float*", "--timeout", "0.6", "-q"])
    expect("progress:" not in err, "-q: no progress lines")

    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
