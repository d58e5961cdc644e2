#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Matrix speed (docs/design.md §11): the cost of running several libraries at once (every library and
every ordered pair) against the sum of running each library alone, from one interleaved run.
Prints figures and ratios; asserts nothing.

For each build given (--build LABEL=PYTHONPATH, the folder holding the `validator` package;
several builds are measured round-robin, so a busy moment hits all of them alike), each
round runs `python -m validator LIB` for every library, then `python -m validator LIB...`
(the matrix), each with its baseline when --baselines names a folder of LIB.json files (and
pairs.json for the matrix, merged the way tests/peers does it).

  bench/matrix_speed.py --python ~/.cache/dlpack-validate/peers-*/bin/python \\
      --build new=build/python [--build old=/tmp/old/python] [--rounds 1] \\
      [--libs numpy torch ...] [--baselines baselines/peers] [--json out.json]

Per build it prints: the sum of the single runs, the matrix, matrix / sum (the goal of
issue "Speed III" is at most 1.0, the singles at -j 1: --singles-args new="-j 1"), the matrix's workers and its time inside cases; with two
builds, each figure's ratio to the first build's, and whether the matrix records agree in
every result's status (they must: scheduling may change the time, never a verdict).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LIBS = ["numpy", "torch", "jax", "paddle", "tvm_ffi", "pyarrow", "array_api_strict", "tensorflow", "mlx"]


def run(python, pythonpath, libs, baseline, out_json, extra=()):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    cmd = [python, "-m", "validator", "-q", "--json", out_json] + list(extra) + \
        (["--baseline", baseline] if baseline else []) + libs
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    rec = json.load(open(out_json))
    return wall, rec


def merged_baseline(folder, libs, tmp):
    path = os.path.join(tmp, "matrix-baseline.json")
    files = [os.path.join(folder, n + ".json") for n in libs + ["pairs"]]
    subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "merge_baselines.py"), path] +
                   [f for f in files if os.path.exists(f)], check=True)
    return path


def statuses(rec):
    return {(r["id"], r["subject"], r.get("peer")): r["status"] for r in rec["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", required=True, help="the interpreter of the peers' venv")
    ap.add_argument("--build", action="append", required=True, help="LABEL=PYTHONPATH (repeatable)")
    ap.add_argument("--libs", nargs="+", default=LIBS)
    ap.add_argument("--baselines", help="folder of LIB.json baselines (baselines/peers)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--args", action="append", default=[],
                    help="LABEL=ARGS: more validator options for that build's runs (\"-j 1\")")
    ap.add_argument("--singles-args", action="append", default=[],
                    help="LABEL=ARGS: more validator options for that build's single-library runs only")
    ap.add_argument("--json", help="write the figures to PATH")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    extra = {k: v.split() for k, v in (x.split("=", 1) for x in a.args)}
    singles_extra = {k: v.split() for k, v in (x.split("=", 1) for x in a.singles_args)}
    fig = {label: {"singles": [], "matrix": [], "case_time": [], "workers": []} for label, _ in builds}
    records = {}
    with tempfile.TemporaryDirectory() as tmp:
        mbase = merged_baseline(a.baselines, a.libs, tmp) if a.baselines else None
        for rnd in range(a.rounds):
            for label, path in builds:
                total = 0.0
                for lib in a.libs:
                    base = os.path.join(a.baselines, lib + ".json") if a.baselines else None
                    wall, _ = run(a.python, path, [lib], base if base and os.path.exists(base) else None,
                                  os.path.join(tmp, "single.json"),
                                  extra.get(label, []) + singles_extra.get(label, []))
                    print(f"  round {rnd + 1} {label:<8} {lib:<18} {wall:8.1f} s", flush=True)
                    total += wall
                out = os.path.join(tmp, f"matrix-{label}.json")
                wall, rec = run(a.python, path, a.libs, mbase, out, extra.get(label, []))
                records[label] = rec
                fig[label]["singles"].append(total)
                fig[label]["matrix"].append(wall)
                fig[label]["case_time"].append(sum(r.get("duration_s") or 0 for r in rec["results"]))
                fig[label]["workers"].append((rec.get("supervisor") or {}).get("workers_started"))
                print(f"  round {rnd + 1} {label:<8} singles {total:8.1f} s   matrix {wall:8.1f} s "
                      f"({len(rec['results'])} results, {fig[label]['workers'][-1]} workers)", flush=True)
    print(f"\nmatrix speed: medians of {a.rounds} round(s), {len(a.libs)} libraries, {os.cpu_count()} CPU(s)")
    first = builds[0][0]
    summary = {}
    for label, _ in builds:
        f = fig[label]
        s, m = statistics.median(f["singles"]), statistics.median(f["matrix"])
        row = {"singles_s": s, "matrix_s": m, "matrix_over_singles": m / s, "case_time_s": statistics.median(f["case_time"]),
               "workers": f["workers"]}
        summary[label] = row
        extra = ""
        if label != first:
            b = summary[first]
            extra = (f"   vs {first}: singles x{s / b['singles_s']:.2f}, matrix x{m / b['matrix_s']:.2f}")
        print(f"  {label:<8} singles sum {s:7.1f} s  matrix {m:7.1f} s  matrix/singles {m / s:5.2f}  "
              f"inside cases {row['case_time_s']:6.1f} s  workers {f['workers']}{extra}")
    if len(builds) > 1:
        a0 = statuses(records[first])
        for label, _ in builds[1:]:
            b0 = statuses(records[label])
            diff = [k for k in a0.keys() | b0.keys() if a0.get(k) != b0.get(k)]
            print(f"  matrix records {first} vs {label}: {len(a0)} vs {len(b0)} results, "
                  f"{len(diff)} differ in status" + (f" (first: {sorted(diff, key=str)[:3]})" if diff else ""))
            summary[label]["status_differences"] = len(diff)
    if a.json:
        json.dump(summary, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
