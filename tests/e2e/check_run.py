#!/usr/bin/env python3
"""tests/e2e/check_run.py: run dlpack-validate on one subject and check the verdicts.

--expect-all STATUS       every case must end with STATUS (the reference run)
--expect GLOB=STATUS,...  cases matching a GLOB must end with its STATUS (first match wins),
                          each GLOB must match at least one case, and every other case must
                          end as in --reference (the mutant runs: nothing else regresses)
The exit code must be 1 when an expected status is unexpected (fail, crash, timeout, error),
else 0; a run whose only targets are warnings must also exit 1 under --strict.
"""
import argparse
import fnmatch
import json
import subprocess
import sys

UNEXPECTED = {"fail", "crash", "timeout", "error"}


def run(args, extra):
    cmd = [args.validator, "--json", args.out, "--timeout", str(args.timeout)] + extra + [args.subject]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return proc, json.load(open(args.out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--subject", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference")
    ap.add_argument("--expect", default="")
    ap.add_argument("--expect-all")
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--extra", action="append", default=[])
    args = ap.parse_args()

    proc, record = run(args, args.extra)
    problems = []
    statuses = {r["id"]: r["status"] for r in record["results"]}
    if args.expect_all:
        for cid, st in statuses.items():
            if st != args.expect_all:
                r = next(x for x in record["results"] if x["id"] == cid)
                problems.append(f"{cid}: expected {args.expect_all}, got {st}: {r['message']} "
                                f"(expected {r['expected']!r}, observed {r['observed']!r})")
        want_exit = 1 if args.expect_all in UNEXPECTED else 0
    else:
        rules = [tuple(item.split("=", 1)) for item in args.expect.split(",") if item]
        reference = {r["id"]: r["status"] for r in json.load(open(args.reference))["results"]}
        used = set()
        for cid, st in statuses.items():
            rule = next(((g, s) for g, s in rules if fnmatch.fnmatchcase(cid, g)), None)
            if rule:
                used.add(rule[0])
                if st != rule[1]:
                    r = next(x for x in record["results"] if x["id"] == cid)
                    problems.append(f"{cid}: expected {rule[1]} (planted bug), got {st}: {r['message']}")
            elif st != reference.get(cid):
                r = next(x for x in record["results"] if x["id"] == cid)
                problems.append(f"{cid}: collateral change {reference.get(cid)} -> {st}: {r['message']}")
        for g, _ in rules:
            if g not in used:
                problems.append(f"expectation {g} matched no case")
        targets = {s for _, s in rules}
        want_exit = 1 if targets & UNEXPECTED else 0
        if not (targets & UNEXPECTED) and "warn" in targets:
            strict_proc, _ = run(args, args.extra + ["--strict"])
            if strict_proc.returncode != 1:
                problems.append(f"--strict run exited {strict_proc.returncode}, expected 1")
    if proc.returncode != want_exit:
        problems.append(f"exit code {proc.returncode}, expected {want_exit}; stderr: {proc.stderr.strip()[:500]}")
    if not record.get("complete"):
        problems.append("run record is not complete")

    for p in problems:
        print("PROBLEM:", p)
    checked = len(statuses)
    print(f"{checked - min(len(problems), checked)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
