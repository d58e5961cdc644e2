#!/usr/bin/env python3
"""tools/check_libraries.py (CTest e2e.libraries): the library table
(python_shim/validator/libraries.tsv) and the copies that must exist beside it agree.

- every pin of a row is in its gate's pip requirement file (pinned: peers/requirements.txt,
  oneapi: peers/oneapi-requirements.txt, generic: peers/generic-requirements.txt), and every
  line of those files is a pin of some row (a helper pinned for another library included); an
  `own` row's file, peers/NAME-requirements.txt, holds exactly its pins;
- every adapter a row names is a module under python_shim/validator/adapters/, and every
  *_adapter.py there is named by a row;
- the reproducer's layout recipes (repro.py `_LAYOUT`) are for libraries of the table, each with
  a make recipe;
- docs/design.md §4 and docs/adapters.md name every library with an adapter.
Exit 0 when all agree, else 1 with one line per disagreement."""
import ast
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python_shim", "validator"))
import libraries  # noqa: E402  (validator/libraries.py: pure Python, read without the package)

FILES = {"pinned": "peers/requirements.txt", "oneapi": "peers/oneapi-requirements.txt",
         "generic": "peers/generic-requirements.txt"}
OWN = "peers/{}-requirements.txt"  # the `own` gate: a venv per library


def pins_of(path):
    out = set()
    for line in open(os.path.join(ROOT, path), encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            out.add(line)
    return out


def main():
    rows = libraries.read()
    problems = []
    every_pin = {p for r in rows for p in (r["pins"] or "").split()}
    for gate, path in FILES.items():
        listed = pins_of(path)
        for r in rows:
            if r["gate"] == gate:
                for p in (r["pins"] or "").split():
                    if p not in listed:
                        problems.append(f"{r['name']}: pin {p} is not in {path}")
        for p in sorted(listed - every_pin):
            problems.append(f"{path}: {p} is a pin of no row of the library table")
    for r in rows:
        if r["gate"] == "own":
            path = OWN.format(r["name"])
            if not os.path.exists(os.path.join(ROOT, path)):
                problems.append(f"{r['name']}: gate own but no {path}")
            elif pins_of(path) != set((r["pins"] or "").split()):
                problems.append(f"{path}: {sorted(pins_of(path))}, the library table pins {r['pins']}")
        if r["gate"] not in (*FILES, "own", "atlas"):
            problems.append(f"{r['name']}: gate {r['gate']!r} is none of {sorted(FILES) + ['own', 'atlas']}")
        if r["gate"] in (*FILES, "own") and not r["pins"]:
            problems.append(f"{r['name']}: gate {r['gate']} but no pins")
    folder = os.path.join(ROOT, "python_shim", "validator", "adapters")
    named = {r["adapter"] for r in rows if r["adapter"]}
    for a in sorted(named):
        if not os.path.exists(os.path.join(folder, a + ".py")):
            problems.append(f"adapter {a}: no file {a}.py in python_shim/validator/adapters/")
    for f in sorted(os.listdir(folder)):
        if f.endswith("_adapter.py") and f[:-3] not in named:
            problems.append(f"python_shim/validator/adapters/{f}: named by no row of the library table")
    tree = ast.parse(open(os.path.join(ROOT, "python_shim", "validator", "repro.py"), encoding="utf-8").read())
    make = {r["name"] for r in rows if r["make"]}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_LAYOUT" for t in node.targets):
            for k in node.value.keys:
                if k.value not in make:
                    problems.append(f"repro.py _LAYOUT: {k.value} has no make recipe in the library table")
    for doc in ("docs/design.md", "docs/adapters.md"):
        text = open(os.path.join(ROOT, doc), encoding="utf-8").read()
        for r in rows:
            if r["adapter"] and f"`{r['name']}`" not in text:
                problems.append(f"{doc} does not name the built-in adapter `{r['name']}`")
    for p in problems:
        print("PROBLEM:", p)
    print(f"library table: {len(rows)} libraries, {len(named)} adapters; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
