#!/usr/bin/env python3
"""tests/e2e/check_run_summary.py (CTest e2e.run_summary): README command 1 ends on what it
decided (tools/run_summary.py, the last lines of scripts/run-main.sh): a line per run with its
verdict, then one line naming the run that sets the exit status, and the script's exit status is
that run's. Checked on a passing record (the reference plugin), a failing one (a mutant) and a
run that left no record.

  check_run_summary.py --validator build/dlpack-validate --reference REF.so --mutant MUT.so --work DIR
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "..", "..", "tools", "run_summary.py")


def main():
    ap = argparse.ArgumentParser()
    for k in ("--validator", "--reference", "--mutant", "--work"):
        ap.add_argument(k, required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    good, bad = os.path.join(a.work, "good.json"), os.path.join(a.work, "bad.json")
    subprocess.run([a.validator, a.reference, "--filter", "producer.input.uint8.*", "--json", good, "-q"],
                   stdout=subprocess.DEVNULL)
    subprocess.run([a.validator, a.mutant, "--filter", "producer.input.uint8.*", "--json", bad, "-q"],
                   stdout=subprocess.DEVNULL)
    problems = []
    runs = [f"reference plugin={good}:0", f"a library={bad}:1", f"no record={a.work}/missing.json:3"]
    for decides, want in (("reference plugin", 0), ("a library", 1), ("no record", 3)):
        p = subprocess.run([sys.executable, TOOL, "--decides", decides, *runs], capture_output=True, text=True)
        lines = p.stdout.strip().splitlines()
        last = lines[-1] if lines else ""
        print(f"--decides {decides!r}: exit {p.returncode}; last line: {last}")
        if p.returncode != want:
            problems.append(f"--decides {decides}: exit {p.returncode}, the run's was {want}")
        if not last.startswith(f"command 1: exit {want}, set by {decides}"):
            problems.append(f"--decides {decides}: the last line does not say what decided: {last!r}")
        body = "\n".join(lines)
        for label, word in (("reference plugin", "PASS"), ("a library", "FAIL"), ("no record", "no record")):
            row = next((l for l in lines if l.strip().startswith(label)), "")
            if word not in row:
                problems.append(f"the row of {label} does not say {word}: {row!r}")
        if body.count("sets the exit status") != 1:
            problems.append("not exactly one row says it sets the exit status")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
