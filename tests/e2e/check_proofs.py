#!/usr/bin/env python3
"""tests/e2e/check_proofs.py: every case is proven (DESIGN §9): for each case id the
validator lists, at least one mutant in the table must make it end other than `pass`.
(The mutant tests themselves check that those statuses really occur.)"""
import argparse
import fnmatch
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--validator")
    who.add_argument("--command", help='command line instead of --validator ("python3 -m validator")')
    ap.add_argument("--only", help="check only case ids matching this glob")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--proofs", help="a proof table, tests/proofs/*.tsv (FIXTURE, GLOB, STATUS; @arg lines)")
    src.add_argument("--expectations", help="NAME|GLOB=STATUS,...|ARGS lines (older form)")
    args = ap.parse_args()
    prefix = shlex.split(args.command) if args.command else [args.validator]
    listing = subprocess.run(prefix + ["--list"], capture_output=True, text=True, check=True)
    ids = [line.split()[0] for line in listing.stdout.splitlines() if line.strip()]
    if args.only:
        ids = [cid for cid in ids if fnmatch.fnmatchcase(cid, args.only)]
    mutants = []  # per mutant, its ordered (glob, status) rules: the first match wins
    if args.proofs:
        table = {}
        for line in open(args.proofs):
            if not line.strip() or line.startswith("#"):
                continue
            name, glob, status = line.rstrip("\n").split("\t")
            rules, filters = table.setdefault(name, ([], []))
            if glob == "@arg":
                if status.startswith("--filter="):
                    filters.append(status.split("=", 1)[1])
            elif glob != "-":
                rules.append((glob, status))
        mutants = [(name, rules, filters) for name, (rules, filters) in table.items()]
    for line in open(args.expectations) if args.expectations else []:
        if not line.strip():
            continue
        name, expect, extra = (line.rstrip("\n").split("|") + [""])[:3]
        # A mutant run restricted by --filter proves only the cases it actually runs.
        filters = [a.split("=", 1)[1] for a in extra.split(",") if a.startswith("--filter=")]
        mutants.append((name, [tuple(item.split("=", 1)) for item in expect.split(",")], filters))

    def caught(cid):
        for _, rules, filters in mutants:
            if filters and not any(fnmatch.fnmatchcase(cid, f) for f in filters):
                continue
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
