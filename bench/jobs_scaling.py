#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Jobs scaling (docs/bench.md): one run at -j 1, 2, 4, ..., the cores, interleaved round by
round (a busy moment hits every width alike), with the speed-up over -j 1, the efficiency
(speed-up / N) and whether every result's status is the one -j 1 gave (it must be: lanes may
change the time, never a verdict). Prints figures; asserts nothing.

  bench/jobs_scaling.py --python ~/.cache/dlpack-validate/peers-*/bin/python --pythonpath build/python \\
      [--libs numpy torch ...] [--baselines baselines/peers] [--jobs 1 2 4 8 16] [--rounds 1] [--json out.json]
  bench/jobs_scaling.py --validator build/dlpack-validate --plugin build/tests/libdlpv_reference.so ...

With --libs naming several libraries the run is the matrix (every library and every ordered
pair), with its baselines merged as tests/peers does. The default widths: 1, then powers of two
below the cores, then the cores.
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


def widths(cores):
    out, n = [1], 2
    while n < cores:
        out.append(n)
        n *= 2
    if cores > 1:
        out.append(cores)
    return out


def merged_baseline(folder, libs, tmp):
    path = os.path.join(tmp, "baseline.json")
    files = [os.path.join(folder, n + ".json") for n in libs + (["pairs"] if len(libs) > 1 else [])]
    files = [f for f in files if os.path.exists(f)]
    if not files:
        return None
    subprocess.run([sys.executable, os.path.join(HERE, "..", "tools", "merge_baselines.py"), path] + files, check=True)
    return path


def statuses(rec):
    return {(r["id"], r["subject"], r.get("peer")): r["status"] for r in rec["results"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", help="the interpreter of the peers' venv (python -m validator)")
    ap.add_argument("--pythonpath", help="the folder holding the validator package (build/python)")
    ap.add_argument("--libs", nargs="+", default=LIBS)
    ap.add_argument("--validator", help="the dlpack-validate binary (with --plugin)")
    ap.add_argument("--plugin", nargs="+", help="plugin libraries instead of Python packages")
    ap.add_argument("--baselines", help="folder of LIB.json baselines (baselines/peers)")
    ap.add_argument("--jobs", nargs="+", type=int, help="the widths (default: 1, powers of two, the cores)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", help="write the figures to PATH")
    a = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    jobs = a.jobs or widths(cores)
    with tempfile.TemporaryDirectory() as tmp:
        if a.plugin:
            if not a.validator:
                ap.error("--plugin needs --validator")
            base_cmd, env, what = [a.validator], dict(os.environ), " ".join(os.path.basename(p) for p in a.plugin)
            subjects, baseline = a.plugin, None
        else:
            if not (a.python and a.pythonpath):
                ap.error("give --python and --pythonpath (or --validator and --plugin)")
            base_cmd = [a.python, "-m", "validator"]
            env = dict(os.environ, PYTHONPATH=a.pythonpath, TF_CPP_MIN_LOG_LEVEL="3")
            subjects, what = a.libs, " ".join(a.libs)
            baseline = merged_baseline(a.baselines, a.libs, tmp) if a.baselines else None
        walls = {n: [] for n in jobs}
        records = {}
        for rnd in range(a.rounds):
            for n in jobs:
                out = os.path.join(tmp, f"j{n}.json")
                cmd = base_cmd + ["-q", "-j", str(n), "--json", out] + (["--baseline", baseline] if baseline else []) + subjects
                t0 = time.perf_counter()
                proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                      timeout=7200)
                wall = time.perf_counter() - t0
                if proc.returncode not in (0, 1):
                    sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
                rec = json.load(open(out))
                records[n] = rec
                walls[n].append(wall)
                sup = rec.get("supervisor") or {}
                print(f"  round {rnd + 1} -j {n:<3} {wall:8.1f} s  ({len(rec['results'])} results, lanes "
                      f"{sup.get('lanes')}, {sup.get('workers_started')} workers)", flush=True)
    print(f"\njobs scaling: {what}; medians of {a.rounds} round(s); {cores} core(s)")
    print(f"  {'-j':>4} {'wall s':>9} {'speed-up':>9} {'efficiency':>11} {'lanes':>6} {'statuses vs -j 1':>20}")
    base = statistics.median(walls[jobs[0]])
    ref = statuses(records[jobs[0]])
    summary = []
    for n in jobs:
        m = statistics.median(walls[n])
        st = statuses(records[n])
        diff = sorted((k for k in ref.keys() | st.keys() if ref.get(k) != st.get(k)), key=str)
        row = {"jobs": n, "wall_s": round(m, 2), "speedup": round(base / m, 2), "efficiency": round(base / m / n, 2),
               "lanes": (records[n].get("supervisor") or {}).get("lanes"), "status_differences": len(diff),
               "first_differences": [list(map(str, k)) for k in diff[:3]]}
        summary.append(row)
        same = "same" if not diff else f"{len(diff)} differ"
        print(f"  {n:>4} {m:9.1f} {row['speedup']:9.2f} {row['efficiency']:11.2f} {str(row['lanes']):>6} {same:>20}")
        for k in diff[:3]:
            print(f"       {k}: -j {jobs[0]} {ref.get(k)}, -j {n} {st.get(k)}")
    if a.json:
        json.dump({"cores": cores, "subjects": what, "rows": summary}, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
