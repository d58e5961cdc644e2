#!/usr/bin/env python3
"""tests/proofs/proofs.py: read the proof tables (tests/proofs/*.tsv) and answer which fixtures
break a case. Used by tests/e2e/check_proofs.py and by case authors:

    python3 tests/proofs/proofs.py breakers 'producer.flags.read_only.*' --list build/list.json

prints, for each matching case, the fixtures whose planted bug it catches (what its declaration's
proven_by may name)."""
import argparse
import fnmatch
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("mutants.tsv", "fakearray.tsv", "hostile.tsv")


class Fixture:
    """One fixture's facts: ordered (glob, status) rules (the first match wins) and the filters
    its runs are restricted to (@arg --filter=, @run)."""

    def __init__(self, table, name):
        self.table, self.name, self.rules, self.filters = table, name, [], []

    def expected(self, case_id):
        """The status the fixture's run must give case_id, or None (not run / not named)."""
        if self.filters and not any(fnmatch.fnmatchcase(case_id, f) for f in self.filters):
            return None
        return next((s for g, s in self.rules if fnmatch.fnmatchcase(case_id, g)), None)

    def breaks(self, case_id):
        status = self.expected(case_id)
        return status is not None and breaking(status)

    def idle_rules(self, case_ids):
        """The pass/skip rules that carve nothing: no case they decide (first match) would
        otherwise fall to a later breaking rule. A table keeps only claims, so these are noise
        (what the fixture does to those cases is pinned by the identity manifest)."""
        decided = {}  # rule index -> the cases it is the first match of
        for c in case_ids:
            first = next((i for i, (g, _) in enumerate(self.rules) if fnmatch.fnmatchcase(c, g)), None)
            decided.setdefault(first, []).append(c)
        idle = []
        for i, (glob, status) in enumerate(self.rules):
            if breaking(status) or i not in decided:
                continue
            later = [g for g, s in self.rules[i + 1:] if breaking(s)]
            if not any(fnmatch.fnmatchcase(c, g) for c in decided[i] for g in later):
                idle.append((glob, status))
        return idle


def breaking(status):
    """A proof status that breaks a case: not pass or skip. "skip/pass" names alternatives (real
    hardware and the emulated driver differ): it breaks only if every alternative does."""
    return all(a not in ("pass", "skip") for a in status.split(":")[0].split("/"))


def read_table(path):
    fixtures = {}
    table = os.path.basename(path)
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        name, glob, value = line.rstrip("\n").split("\t")
        fx = fixtures.setdefault(name, Fixture(table, name))
        if glob == "@arg":
            if value.startswith("--filter="):
                fx.filters.append(value.split("=", 1)[1])
        elif glob == "@run":
            fx.filters.append(value)
        elif not glob.startswith("@") and glob != "-":
            fx.rules.append((glob, value))
    return fixtures


class Named:
    """Every fixture of one name across the tables (a C mutant and a fake-array variant may
    share a name when they plant the same bug): it breaks a case if any of them does."""

    def __init__(self, name):
        self.name, self.fixtures = name, []

    def breaks(self, case_id):
        return any(fx.breaks(case_id) for fx in self.fixtures)


def read_tables(paths):
    out = {}
    for p in paths:
        for name, fx in read_table(p).items():
            out.setdefault(name, Named(name)).fixtures.append(fx)
    return out


def list_cases(command):
    """Every case the validator lists, as declared (`COMMAND --list --json -`)."""
    out = subprocess.run(command + ["--list", "--json", "-"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def report(problems, checked):
    """Print the problems and the count line; the exit code of a check."""
    for p in problems:
        print(p)
    print(f"{checked} cases checked, {len(problems)} problems")
    return 1 if problems else 0


def load_listing(path):
    """`--list --json` output, or the plain `--list` text (ids in the first column)."""
    text = open(path).read()
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [{"id": line.split()[0]} for line in text.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("breakers", help="fixtures that break each case matching GLOB")
    b.add_argument("glob")
    b.add_argument("--list", required=True, help="`--list --json` output of the validator")
    b.add_argument("--common", action="store_true", help="only the fixtures that break every match")
    args = ap.parse_args()
    fixtures = read_tables(os.path.join(HERE, t) for t in TABLES)
    cases = [c for c in load_listing(args.list) if fnmatch.fnmatchcase(c["id"], args.glob)]
    if args.common:
        names = [n for n, fx in fixtures.items() if all(fx.breaks(c["id"]) for c in cases)]
        print(f"{len(cases)} cases; broken by every one: {' '.join(names) or '(none)'}")
        return 0
    for c in cases:
        print(c["id"], " ".join(n for n, fx in fixtures.items() if fx.breaks(c["id"])) or "-")
    return 0


if __name__ == "__main__":
    sys.exit(main())
