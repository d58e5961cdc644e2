#!/usr/bin/env python3
"""tests/e2e/check_proofs.py: every case is proven (DESIGN §9): for each case id the
validator lists, at least one mutant in the table must make it end other than `pass`.
(The mutant tests themselves check that those statuses really occur.)"""
import argparse
import fnmatch
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--expectations", required=True)
    args = ap.parse_args()
    listing = subprocess.run([args.validator, "--list"], capture_output=True, text=True, check=True)
    ids = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    mutants = []  # per mutant, its ordered (glob, status) rules: the first match wins
    for line in open(args.expectations):
        if not line.strip():
            continue
        name, expect = line.strip().split("|", 1)
        mutants.append((name, [tuple(item.split("=", 1)) for item in expect.split(",")]))

    def caught(cid):
        for _, rules in mutants:
            first = next((s for g, s in rules if fnmatch.fnmatchcase(cid, g)), None)
            if first not in (None, "pass", "skip"):
                return True
        return False

    unproven = [cid for cid in ids if not caught(cid)]
    for cid in unproven:
        print("UNPROVEN: no mutant fails", cid)
    print(f"{len(ids) - len(unproven)} passed, {len(unproven)} failed")
    return 1 if unproven else 0


if __name__ == "__main__":
    sys.exit(main())
