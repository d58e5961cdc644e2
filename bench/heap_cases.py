#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Heap-measurement cases, per case, build against build (docs/bench.md): the cases that read
the C heap (producer.deleter.frees*, and the Python deleter and capsule cases) run on one subject
with each build given (--args new="-j 1" for one lane where the build has -j), round-robin (a busy moment hits every build alike), and
the median duration of each case is printed side by side, with the sum and each case's status
(which must be the same in every build). Prints figures; asserts nothing.

  bench/heap_cases.py --build old="/tmp/old/build/dlpack-validate" --build new="build/dlpack-validate" \\
      --args new="-j 1" --subject build/tests/libdlpv_reference.so [--rounds 5]
  bench/heap_cases.py --build old="PY -m validator" --env old=PYTHONPATH=/tmp/old/build/python \\
      --build new="PY -m validator" --env new=PYTHONPATH=build/python --subject numpy
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

FILTERS = ["producer.deleter.frees*", "python.deleter.*", "python.capsule.destructor.*"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="append", required=True, help="LABEL=COMMAND (repeatable)")
    ap.add_argument("--env", action="append", default=[], help="LABEL=NAME=VALUE for that build's command")
    ap.add_argument("--args", action="append", default=[],
                    help="LABEL=ARGS: more options for that build's runs (\"-j 1\" where the build has -j)")
    ap.add_argument("--subject", nargs="+", required=True)
    ap.add_argument("--filter", action="append", help="case globs (default: the heap cases)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the figures to PATH")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    envs = {label: dict(os.environ) for label, _ in builds}
    for e in a.env:
        label, kv = e.split("=", 1)
        name, value = kv.split("=", 1)
        envs[label][name] = value
    sel = sum((["--filter", f] for f in (a.filter or FILTERS)), [])
    extra = {k: shlex.split(v) for k, v in (x.split("=", 1) for x in a.args)}
    times = {label: {} for label, _ in builds}
    status = {label: {} for label, _ in builds}
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(a.rounds):
            for label, cmd in builds:
                out = os.path.join(tmp, "r.json")
                argv = shlex.split(cmd) + ["-q", "--json", out] + extra.get(label, []) + sel + a.subject
                proc = subprocess.run(argv, env=envs[label], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True, timeout=1800)
                if proc.returncode not in (0, 1):
                    sys.exit(f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
                for r in json.load(open(out))["results"]:
                    key = r["id"]
                    times[label].setdefault(key, []).append(r.get("duration_s") or 0.0)
                    status[label].setdefault(key, set()).add(r["status"])
    labels = [label for label, _ in builds]
    ids = sorted(set().union(*[times[label].keys() for label in labels]))
    print(f"heap cases on {' '.join(a.subject)}: median ms per case over {a.rounds} round(s)")
    print(f"  {'case':<58}" + "".join(f"{label:>10}" for label in labels) + "  status")
    rows, sums = [], {label: 0.0 for label in labels}
    for i in ids:
        med = {label: statistics.median(times[label][i]) * 1000 if i in times[label] else None for label in labels}
        sts = {label: "/".join(sorted(status[label].get(i, {"-"}))) for label in labels}
        same = len(set(sts.values())) == 1
        for label in labels:
            sums[label] += med[label] or 0.0
        rows.append({"id": i, "ms": med, "status": sts})
        print(f"  {i:<58}" + "".join(f"{(med[label] or 0):10.1f}" for label in labels) +
              f"  {sts[labels[0]] if same else sts}")
    print(f"  {'sum':<58}" + "".join(f"{sums[label]:10.1f}" for label in labels))
    if a.json:
        json.dump({"rows": rows, "sum_ms": sums}, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
