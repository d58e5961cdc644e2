#!/usr/bin/env python3
"""tools/merge_baselines.py OUT IN...: one baseline whose entries are those of every IN file, in
order (the first match wins, as in each file). For a run over several libraries at once (the
pinned peers' matrix) whose findings are kept one file per library."""
import json
import sys


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    entries = []
    for path in inputs:
        entries += json.load(open(path))["entries"]
    json.dump({"schema": "dlpack-validate/baseline", "schema_version": 1,
               "comment": "merged from " + ", ".join(inputs), "entries": entries}, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
