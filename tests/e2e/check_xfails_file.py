#!/usr/bin/env python3
"""tests/e2e/check_xfails_file.py: --xfails-file, a plain list of case ids (array-api-tests'
habit). A mutant's failing cases, listed one per line with '#' comments and a glob, turn into
xfail and the run exits 0; a listed case that passes is xpass; a line of two words is bad input
(exit 2)."""
import argparse
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--mutant", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rec_path = os.path.join(a.workdir, "first.json")
    p = subprocess.run([a.validator, a.mutant, "-q", "--json", rec_path], capture_output=True, text=True)
    if p.returncode != 1:
        sys.exit(f"the mutant should fail some case (exit 1), got {p.returncode}: {p.stderr}")
    bad = sorted({r["id"] for r in json.load(open(rec_path))["results"]
                  if r["status"] in ("fail", "warn", "crash", "timeout", "error")})
    listed = os.path.join(a.workdir, "xfails.txt")
    with open(listed, "w") as f:
        f.write("# known failures of the mutant\n\n")
        for i, case in enumerate(bad):
            f.write(f"{case}   # line {i}\n")
        f.write("consumer.roundtrip.float32.contiguous.*\n")  # passes: xpass
    again = os.path.join(a.workdir, "again.json")
    p = subprocess.run([a.validator, a.mutant, "-q", "--xfails-file", listed, "--json", again],
                       capture_output=True, text=True)
    rec = json.load(open(again))
    counts = rec["summary"]["counts"]
    if p.returncode != 0 or counts.get("xfail", 0) < len(bad) or counts.get("fail", 0) or not counts.get("xpass"):
        sys.exit(f"with the list: exit {p.returncode}, counts {counts} ({len(bad)} listed failures)\n{p.stderr}")
    reasons = {r["baseline"]["reason"] for r in rec["results"] if r["status"] == "xfail"}
    if not all("listed in" in x and "(line " in x for x in reasons):
        sys.exit(f"xfail reasons do not name the list and line: {sorted(reasons)[:3]}")
    two = os.path.join(a.workdir, "two.txt")
    open(two, "w").write("a.b c.d\n")
    p = subprocess.run([a.validator, a.mutant, "-q", "--xfails-file", two], capture_output=True, text=True)
    if p.returncode != 2 or "one case id" not in p.stderr:
        sys.exit(f"a line of two words: exit {p.returncode}, {p.stderr!r}")
    print(f"ok: {len(bad)} listed failures xfail, one listed pass xpass, a malformed line is bad input")
    return 0


if __name__ == "__main__":
    sys.exit(main())
