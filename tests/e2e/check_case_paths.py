#!/usr/bin/env python3
"""tests/e2e/check_case_paths.py: the path is the id (cases/README.md). For every case the
validator lists (`--list --json -`), the file that declares it, written with dots
(cases/producer/flags.cpp -> producer.flags), is a prefix of its id in whole segments, and no
other case file under cases/ is a longer such prefix: `producer.flags.read_only.versioned` is
found by looking for cases/producer/flags/read_only.cpp, then cases/producer/flags.cpp, then
cases/producer.cpp."""
import argparse
import os
import shlex
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proofs"))
import proofs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--validator")
    who.add_argument("--command")
    ap.add_argument("--cases-dir", required=True, help="the source tree's cases/ folder")
    args = ap.parse_args()
    prefix = shlex.split(args.command) if args.command else [args.validator]
    cases = proofs.list_cases(prefix)
    files = set()
    for root, dirs, names in os.walk(args.cases_dir):
        dirs[:] = [d for d in dirs if d != "support"]
        for n in names:
            if n.endswith(".cpp"):
                rel = os.path.relpath(os.path.join(root, n), args.cases_dir)
                files.add(tuple(rel[: -len(".cpp")].split(os.sep)))
    problems = []
    for c in cases:
        segs = c["id"].split(".")
        want = next((segs[:k] for k in range(len(segs), 0, -1) if tuple(segs[:k]) in files), None)
        src = c.get("source", "")
        got = src[len("cases/"):-len(".cpp")].split("/") if src.startswith("cases/") and src.endswith(".cpp") else None
        if want is None:
            problems.append(f"{c['id']}: no file under cases/ is named by a prefix of its id (declared in {src or '?'})")
        elif got != want:
            problems.append(f"{c['id']}: declared in {src or '?'}, but its id says cases/{'/'.join(want)}.cpp")
    return proofs.report(problems, len(cases))


if __name__ == "__main__":
    sys.exit(main())
