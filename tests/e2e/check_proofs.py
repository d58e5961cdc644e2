#!/usr/bin/env python3
"""tests/e2e/check_proofs.py: every case is proven (docs/design.md §10), and says by what.

For each case the validator lists (`--list --json -`):
  - some fixture of the proof table given with --proofs makes it end other than pass or skip
    (the fixture runs themselves check that those statuses really occur);
  - its declaration names the fixtures that prove it (Declare::proven_by), each of them is in
    one of the proof tables (tests/proofs/*.tsv), and at least one of them breaks this case
    there: a declared proof is a claim the tables back;
  - every pass or skip line of the table carves a later line's glob (the tables hold claims; the
    identity manifest pins the rest).
Both directions read the tables through tests/proofs/proofs.py."""
import argparse
import fnmatch
import os
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proofs"))
import proofs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--validator")
    who.add_argument("--command", help='command line instead of --validator ("python3 -m validator")')
    ap.add_argument("--only", help="check only case ids matching this glob")
    ap.add_argument("--proofs", required=True, help="the table whose fixtures must break these cases")
    args = ap.parse_args()
    prefix = shlex.split(args.command) if args.command else [args.validator]
    cases = proofs.list_cases(prefix)
    if args.only:
        cases = [c for c in cases if fnmatch.fnmatchcase(c["id"], args.only)]

    table = proofs.read_table(args.proofs)
    everything = proofs.read_tables(os.path.join(proofs.HERE, t) for t in proofs.TABLES)
    problems = []
    for c in cases:
        cid = c["id"]
        if not any(fx.breaks(cid) for fx in table.values()):
            problems.append(f"UNPROVEN: no fixture in {os.path.basename(args.proofs)} breaks {cid}")
        declared = c.get("proven_by") or []
        if not declared:
            problems.append(f"UNDECLARED: {cid} ({c.get('source', '?')}) names no proving fixture (proven_by)")
            continue
        unknown = [n for n in declared if n not in everything]
        for n in unknown:
            problems.append(f"UNKNOWN: {cid} declares proof {n}, which no table in tests/proofs names")
        known = [n for n in declared if n in everything]
        if known and not any(everything[n].breaks(cid) for n in known):
            problems.append(f"WRONG PROOF: {cid} declares {', '.join(known)}, but the tables say none of them "
                            f"breaks it (tests/proofs/proofs.py breakers '{cid}' --list LISTING names those that do)")
    ids = [c["id"] for c in cases]
    for name, fx in table.items():
        for glob, status in fx.idle_rules(ids):
            problems.append(f"NOT A CLAIM: {os.path.basename(args.proofs)}: {name} {glob} {status} carves no "
                            f"later line's glob (the identity manifest pins it: delete the line)")
    return proofs.report(problems, len(cases))


if __name__ == "__main__":
    sys.exit(main())
