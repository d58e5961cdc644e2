#!/usr/bin/env python3
"""tests/generic/same_statuses.py: run a command that writes a second run record, then say whether
its statuses equal a first record's, case by case (no verdict may depend on which case ran
before: -j 1 against the default).

  same_statuses.py FIRST.json SECOND.json -- COMMAND...

Exit 0 when every case id has the same status in both; 1 with the differences listed."""
import json
import subprocess
import sys


def statuses(path):
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r["status"] for r in json.load(f)["results"]}


def main(argv):
    if "--" not in argv or argv.index("--") != 2:
        raise SystemExit(__doc__.split("\n\n")[1])
    first, second, command = argv[0], argv[1], argv[3:]
    subprocess.run(command, check=False)
    a, b = statuses(first), statuses(second)
    differ = [(k, a.get(k), b.get(k)) for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    for case, x, y in differ:
        print(f"{case}: {x} in {first}, {y} in {second}")
    print(f"{len(a)} and {len(b)} results; {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
