#!/usr/bin/env python3
"""tools/layers.py: which top-level folder includes which, counted, and whether every arrow
points down the layering of docs/architecture.md.

  tools/layers.py [ROOT]            prints the arrows (folder -> folder: #include lines) and
                                    exits 1 if one goes where the layering forbids
  tools/layers.py [ROOT] --matrix   the same as a table (for notes and reviews)

An arrow is one #include line in a C/C++ file of folder A that names a header found in folder
B (resolved by its path suffix, so <dlpack_validate/case.hpp> and "tensor.hpp" both count).
tests/, examples/ and bench/ may include anything and are not counted.
"""
import collections
import os
import re
import sys

# Front-ends over the application over cases and reports over subjects over the engine; the
# reports over the verdict.
ALLOWED = {
    "include": set(),
    "common": set(),
    "harness": {"include", "common"},
    "subjects": {"harness", "include", "common"},
    "cases": {"subjects", "harness", "include", "common"},
    "verdict": {"common"},
    "reports": {"verdict", "common"},
    "app": {"harness", "verdict", "reports", "include", "common"},
    "validator": {"app", "subjects", "harness", "include", "common"},
    "python_shim": {"app", "subjects", "harness", "include", "common"},
    "plugins": {"include"},
}
UNCOUNTED = {"tests", "examples", "bench", "build", "peers", "tools", "scripts", "docs"}
INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]([^">]+)[">]', re.M)


def sources(root):
    for top in sorted(os.listdir(root)):
        path = os.path.join(root, top)
        if top.startswith(".") or top in UNCOUNTED or not os.path.isdir(path):
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith((".c", ".cpp", ".h", ".hpp")):
                    yield top, os.path.relpath(os.path.join(dirpath, f), root)


def arrows(root):
    files = list(sources(root))
    headers = [p for _, p in files if p.endswith((".h", ".hpp"))]
    count = collections.Counter()
    for top, path in files:
        text = open(os.path.join(root, path), errors="replace").read()
        for inc in INCLUDE.findall(text):
            here = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            found = [h for h in headers if h == here or h.endswith("/" + inc)]
            if not found:
                continue  # a system or third-party header
            target = found[0].split("/")[0]
            if target != top:
                count[(top, target)] += 1
    return count


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), ".."))
    count = arrows(root)
    bad = [(a, b) for (a, b) in count if b not in ALLOWED.get(a, set())]
    if "--matrix" in sys.argv:
        tops = sorted({a for a, _ in count} | {b for _, b in count})
        print("| from \\ to | " + " | ".join(tops) + " |")
        print("|---" * (len(tops) + 1) + "|")
        for a in tops:
            print(f"| {a} | " + " | ".join(str(count.get((a, b), "")) for b in tops) + " |")
    else:
        for (a, b), n in sorted(count.items()):
            flag = "" if (a, b) not in bad else "   <- not allowed"
            print(f"{a} -> {b}: {n}{flag}")
    if bad:
        print(f"layers: {len(bad)} arrow(s) against the layering: "
              + ", ".join(f"{a} -> {b}" for a, b in sorted(bad)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
