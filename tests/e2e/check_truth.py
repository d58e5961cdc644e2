#!/usr/bin/env python3
"""tests/e2e/check_truth.py: run dlpack-validate on a real library and check the facts the
report must state about it (not a verdict of our own making).

--status GLOB=STATUS,...   every case matching GLOB ends with STATUS (first match wins);
                           cases matching no GLOB must be pass or skip
--subject-fact KEY=VALUE   a field of subject 0 in the record (e.g. legacy_only=true)
--exit N                   the expected exit code
"""
import argparse
import fnmatch
import json
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--status", default="")
    ap.add_argument("--subject-fact", action="append", default=[])
    ap.add_argument("--exit", type=int, default=0)
    ap.add_argument("args", nargs="+")
    a = ap.parse_args()
    proc = subprocess.run([a.validator, "--json", a.out] + a.args, capture_output=True, text=True,
                          errors="replace")
    problems = []
    if proc.returncode != a.exit:
        problems.append(f"exit {proc.returncode}, expected {a.exit}: {proc.stderr.strip()[:300]}")
    record = json.load(open(a.out))
    subject = record["subjects"][0]
    for fact in a.subject_fact:
        key, want = fact.split("=", 1)
        got = json.dumps(subject.get(key)).strip('"')
        if got != want:
            problems.append(f"subject {key} = {got}, expected {want}")
    rules = [tuple(x.split("=", 1)) for x in a.status.split(",") if x]
    used = set()
    for r in record["results"]:
        rule = next(((g, s) for g, s in rules if fnmatch.fnmatchcase(r["id"], g)), None)
        if rule:
            used.add(rule[0])
            if r["status"] != rule[1]:
                problems.append(f"{r['id']}: {r['status']}, expected {rule[1]}: {r['message'][:200]}")
        elif r["status"] not in ("pass", "skip"):
            problems.append(f"{r['id']}: unexpected {r['status']}: {r['message'][:200]}")
    problems += [f"rule {g} matched no case" for g, _ in rules if g not in used]
    for p in problems:
        print("PROBLEM:", p)
    n = len(record["results"])
    print(f"{n - min(n, len(problems))} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
