#!/usr/bin/env python3
"""tests/zoo/zoo.py: the bug zoo. It plants one bug at a time in the zoo's build of the reference
plugin (dlpv_zoo; tests/zoo/zoo_bug.h) by predicate, "misbehave only when AXIS is VALUE", for
every axis, value and kind of misbehaviour, runs the validator on each, and measures which the
cases catch: the mutation score per axis, per kind and per role, with every survivor listed.

  zoo.py run --validator BUILD/dlpack-validate --plugin BUILD/tests/libdlpv_zoo.so
             [--sample N --seed S] [--only ROLE[:AXIS]] [--bug "ROLE AXIS VALUE KIND" ...]
             [--json OUT] [--first]
  zoo.py run --python "PY -m validator" --subject fakearray.variants:correct ...
             (the adapter route: fakearray's extension reads the same DLPV_ZOO_BUG; PYTHONPATH
             must hold the validator package and the fakearray stage)
  zoo.py report OUT...  the score of a run's --json again (several: the shards of one run, added up)

A bug is caught when some case ends fail, warn, crash, timeout or error where the clean run
(no bug) ended pass or skip. A bug that never struck (no input the validator made had that
value, or none it could change: the strides of a 0-d tensor) is listed apart and left out of
the score, which is caught of struck; a survivor is a bug that struck and was not caught (a case
met it and did not judge it). Exit 0 when the run completed (whatever the score), 1 when the clean run is not
clean, 2 on bad input. --sample N picks N bugs deterministically from --seed (the CI sample).
"""
import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile

AXES = {
    "dtype": ["float32", "int16", "uint8", "float64", "bool", "complex64", "bfloat16", "other"],
    "size": ["zero", "scalar", "small", "k", "m"],
    "ndim": ["0", "1", "2", "3", "4+"],
    "layout": ["contiguous", "fortran", "strided", "offset", "reversed", "broadcast"],
    "align": ["a256", "a64", "a16", "odd"],
    "thread": ["loading", "other"],
    "capsule": ["versioned", "legacy"],
    "request": ["plain", "copy", "no_copy", "read_only"],
    "values": ["plain", "edge"],
    "repeat": ["once", "again"],
    "any": ["any"],
}
KINDS = {
    "producer": ["elements", "strides", "shape", "dtype", "flags", "deleter_noop", "alias", "copy", "exception"],
    "consumer": ["elements", "deleter_leak", "deleter_double", "deleter_early"],
}
ROLE_AXES = {"producer": list(AXES), "consumer": [a for a in AXES if a != "request"]}
CAUGHT = {"fail", "warn", "crash", "timeout", "error"}


def bugs():
    """Every bug of the zoo, in a fixed order: (role, axis, value, kind)."""
    return [(role, axis, value, kind) for role in ("producer", "consumer") for axis in ROLE_AXES[role]
            for value in AXES[axis] for kind in KINDS[role]]


def run(args, bug, hits):
    env = dict(os.environ)
    env.pop("DLPV_ZOO_BUG", None)
    if bug:
        env["DLPV_ZOO_BUG"] = " ".join(bug)
        env["DLPV_ZOO_HITS"] = hits
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        program = args.python.split() if args.python else [args.validator]
        first = ["-x", "--strict"] if bug and args.first else []
        subprocess.run(program + ["--deterministic", "-q"] + first + ["--json", out.name, args.subject or args.plugin],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        record = json.load(open(out.name))
    return {r["id"]: r["status"] for r in record["results"]}


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--validator", help="the C route: dlpack-validate, with --plugin (the zoo's build, dlpv_zoo)")
    r.add_argument("--plugin")
    r.add_argument("--python", help="the adapter route: 'PY -m validator', with --subject (a library whose "
                   "extension reads DLPV_ZOO_BUG: fakearray.variants:correct)")
    r.add_argument("--subject")
    r.add_argument("--sample", type=int)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--only", help="ROLE or ROLE:AXIS")
    r.add_argument("--bug", action="append", default=[], help="run only this bug (repeatable): 'ROLE AXIS VALUE KIND'")
    r.add_argument("--json", help="write the results here")
    r.add_argument("--shard", help="I/N: run only the bugs whose place in the list is I modulo N (0 <= I < N), to "
                   "run a full route as N processes at once; 'report' adds the shards' --json files up")
    r.add_argument("--first", action="store_true",
                   help="stop each bugged run at its first unexpected result (the validator's -x --strict): the "
                   "same caught/survived verdicts, each caught bug named by one case; what makes the generic "
                   "route's full run last minutes, not hours")
    p = sub.add_parser("report", help="print the score of a run's --json again")
    p.add_argument("file", nargs="+", help="one run's --json, or the --json of each shard of one run")
    args = ap.parse_args()
    if args.cmd == "report":
        rows = [row for f in args.file for row in json.load(open(f))["bugs"]]
        order = {" ".join(b): i for i, b in enumerate(bugs())}
        report(sorted(rows, key=lambda r: order.get(r["bug"], len(order))))
        return 0

    if not ((args.validator and args.plugin) or (args.python and args.subject)):
        print("zoo: give --validator and --plugin (the C route) or --python and --subject (the adapter route)",
              file=sys.stderr)
        return 2
    todo = bugs()
    if args.only:
        role, _, axis = args.only.partition(":")
        todo = [b for b in todo if b[0] == role and (not axis or b[1] == axis)]
    if args.bug:
        wanted = [tuple(b.split()) for b in args.bug]
        unknown = [" ".join(b) for b in wanted if b not in todo]
        if unknown:
            print(f"zoo: no such bug: {unknown[0]!r} (ROLE AXIS VALUE KIND, from the lists in zoo.py)", file=sys.stderr)
            return 2
        todo = [b for b in todo if b in wanted]
    if args.shard:
        try:
            index, count = (int(x) for x in args.shard.split("/"))
            if not 0 <= index < count:
                raise ValueError
        except ValueError:
            print(f"zoo: --shard takes I/N with 0 <= I < N, not {args.shard!r}", file=sys.stderr)
            return 2
        todo = todo[index::count]
    if args.sample:
        todo = sorted(random.Random(args.seed).sample(todo, min(args.sample, len(todo))), key=bugs().index)
    clean = run(args, None, None)
    dirty = [cid for cid, st in clean.items() if st not in ("pass", "skip")]
    if dirty:
        print(f"zoo: the clean plugin is not clean: {len(dirty)} cases end otherwise, e.g. {dirty[:3]}")
        return 1
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, bug in enumerate(todo, 1):
            hits = os.path.join(tmp, f"hits{i}")
            statuses = run(args, bug, hits)
            caught = sorted(cid for cid, st in statuses.items() if st in CAUGHT and clean.get(cid) != st)
            struck = os.path.exists(hits)
            results.append({"bug": " ".join(bug), "role": bug[0], "axis": bug[1], "value": bug[2], "kind": bug[3],
                            "struck": struck, "caught_by": caught[:5], "caught": bool(caught)})
            print(f"[{i}/{len(todo)}] {' '.join(bug)}: "
                  + (f"caught ({len(caught)} cases, e.g. {caught[0]})" if caught else
                     "SURVIVED, " + ("struck, not judged" if struck else "never struck")), flush=True)
    report(results)
    if args.json:
        json.dump({"bugs": results}, open(args.json, "w"), indent=1)
    return 0


def report(results):
    def score(rows):
        rows = [r for r in rows if r["struck"]]
        n = len(rows)
        k = sum(r["caught"] for r in rows)
        return f"{k}/{n} ({100.0 * k / n:.0f}%)" if n else "-"
    print("\nmutation score (caught of the bugs that struck; a bug that never struck is listed below)")
    print(f"  all: {score(results)}")
    for key in ("role", "axis", "kind"):
        groups = collections.OrderedDict()
        for r in results:
            groups.setdefault(r[key] if key != "kind" else f"{r['role']}:{r['kind']}", []).append(r)
        print(f"  per {key}: " + "; ".join(f"{g} {score(rows)}" for g, rows in groups.items()))
    never = [r["bug"] for r in results if not r["struck"]]
    unjudged = [r["bug"] for r in results if r["struck"] and not r["caught"]]
    print(f"\nsurvivors (struck, not caught): {len(unjudged)}")
    for b in unjudged:
        print(f"  not caught:   {b}")
    print(f"never struck (no input had that value, or none the bug could change): {len(never)}")
    for b in never:
        print(f"  never struck: {b}")


if __name__ == "__main__":
    sys.exit(main())
