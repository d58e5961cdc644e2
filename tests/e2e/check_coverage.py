#!/usr/bin/env python3
"""tests/e2e/check_coverage.py: the metadata lint over the whole catalogue.

Every case names requirement ids that exist in the requirement table (spec/requirements.md,
compiled as harness/src/requirements_table.inc; also checked at build time by the unit tests);
every requirement is covered by some case or listed in cases/coverage.tsv
with a category and a reason; nothing listed there is also covered by a C-level case. With
--python-validator, items of category `python` are checked against the shim's cases and the
count of those still uncovered is printed (they are the shim's work list)."""
import argparse
import os
import re
import subprocess
import sys


def listed_requirements(cmd):
    out = subprocess.run(cmd + ["--list"], capture_output=True, text=True, check=True).stdout
    reqs = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            reqs.update(r for r in parts[2].split(",") if re.match(r"^[A-Z]+-\d+$", r))
    return reqs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--table", required=True, help="harness/src/requirements_table.inc")
    ap.add_argument("--coverage", required=True, help="cases/coverage.tsv")
    ap.add_argument("--python-validator", nargs="*", default=None)
    a = ap.parse_args()
    checklist = re.findall(r'^\{"([A-Z]+-\d+)"', open(a.table).read(), re.M)
    listed = {}
    for line in open(a.coverage):
        if line.startswith("#") or not line.strip():
            continue
        rid, category, reason = line.rstrip("\n").split("\t")
        listed[rid] = (category, reason)
    # Requirements no case tests: marked in the project's requirement table (*Untested:*).
    spec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "spec", "requirements.md")
    untested = set(re.findall(r"^- \*\*([A-Z]+-\d+)\*\* · .* \*Untested:\* ", open(spec, encoding="utf-8").read(), re.M))
    for r in untested:
        listed.setdefault(r, ("untested", ""))
    covered = listed_requirements([a.validator])
    if a.python_validator:
        both = covered | listed_requirements(a.python_validator)
        problems_untested = [f"{r} is marked *Untested:* in spec/requirements.md but a case cites it"
                             for r in sorted(untested & both)]
    else:
        problems_untested = [f"{r} is marked *Untested:* in spec/requirements.md but a case cites it"
                             for r in sorted(untested & covered)]
    problems = list(problems_untested)
    problems += [f"case cites {r}, which is not in the checklist" for r in sorted(covered - set(checklist))]
    problems += [f"{r} is listed as {listed[r][0]} but a C-level case covers it"
                 for r in sorted(covered & set(listed)) if r not in untested]
    problems += [f"{r} is in coverage.tsv but not in the checklist" for r in sorted(set(listed) - set(checklist))]
    missing = [r for r in checklist if r not in covered and r not in listed]
    problems += [f"{r} is neither covered by a case, listed in cases/coverage.tsv nor marked *Untested:*"
                 for r in missing]
    problems += [f"{r} is both listed in cases/coverage.tsv and marked *Untested:*" for r in sorted(untested)
                 if listed[r][0] != "untested"]
    counts = {}
    for r in checklist:
        key = "covered (C)" if r in covered else listed.get(r, ("missing", ""))[0]
        counts[key] = counts.get(key, 0) + 1
    print("checklist coverage:", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if a.python_validator:
        py = listed_requirements(a.python_validator)
        todo = [r for r, (c, _) in listed.items() if c == "python" and r not in py]
        print(f"python items covered by the shim: {sum(1 for c, _ in listed.values() if c == 'python') - len(todo)}; "
              f"not yet: {' '.join(sorted(todo)) or 'none'}")
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(checklist) - len(missing)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
