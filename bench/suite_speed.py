#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Suite-speed benchmark (docs/design.md §11): how long the validator takes, and what case isolation
costs per case. Prints medians over several runs; asserts nothing.

  full suite on the reference plugin     dlpack-validate libdlpv_reference.so
  python -m validator numpy              (and numpy torch)
  isolation overhead per case            the same cases with --isolate=none, worker, case:
                                         (mode - none) / cases
  against a library's own DLPack tests   python -m validator LIB vs LIB's own test_dlpack.py
  (--peers-python)                       under pytest, same interpreter and library (NumPy and
                                         PyArrow ship theirs in the wheel); pytest is installed
                                         once, pinned, into a venv (scripts/venvs.py) whose
                                         site-packages is put on PYTHONPATH

usage (from a build directory, e.g. /tmp/build):
  bench/suite_speed.py --validator build/dlpack-validate \\
      --plugin build/tests/libdlpv_reference.so --python-validator build/python-validator
  [--runs 5] [--smoke]   (--smoke: one run each, narrow filters; what CTest runs)

Wall time is measured around the whole command (process start, imports, loading the
subjects, every case, the report); `record` is the run record's own duration_s (the
supervised run only). Machines with 2 cores are noisy: read the medians, not single runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, json_path):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + ["--json", json_path, "-q"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if proc.returncode not in (0, 1):  # 1: the library broke a rule, which is not our concern here
        sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
    rec = json.load(open(json_path))
    return wall, rec.get("duration_s") or 0.0, rec["summary"]["total"]


def measure(label, cmd, runs, tmp):
    walls, records, total = [], [], 0
    for i in range(runs):
        wall, dur, total = run(cmd, os.path.join(tmp, "r.json"))
        walls.append(wall)
        records.append(dur)
    row = {"label": label, "cases": total, "runs": runs,
           "wall_median_s": statistics.median(walls), "wall_min_s": min(walls),
           "wall_max_s": max(walls), "record_median_s": statistics.median(records)}
    print(f"  {label:<46} {total:>5} cases  wall median {row['wall_median_s']:7.3f} s "
          f"[{row['wall_min_s']:.3f} .. {row['wall_max_s']:.3f}]  record {row['record_median_s']:7.3f} s",
          flush=True)
    return row


# pytest, and hypothesis (PyArrow's tests import it from their conftest), pinned.
PYTEST = ["pytest==8.4.2", "hypothesis==6.170.17"]
OWN_TESTS = {"numpy": "numpy/_core/tests/test_dlpack.py", "pyarrow": "pyarrow/tests/test_dlpack.py"}


def pytest_dir(python):
    """The site-packages folder of a venv holding pytest (made once by scripts/venvs.py, the
    project's one venv helper), to put on `python`'s PYTHONPATH."""
    helper = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "venvs.py")
    reqs = [a for r in PYTEST for a in ("--req", r)]
    venv_python = subprocess.run([sys.executable, helper, "python", "bench-pytest", *reqs, "--base", python, "-q"],
                                 capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    return subprocess.run([venv_python, "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def timed(cmd, env, runs):
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
        walls.append(time.perf_counter() - t0)
        if proc.returncode not in (0, 1):
            sys.exit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return walls


def own_tests(python, validator_path, runs, out):
    """The validator on a library vs that library's own DLPack tests, interleaved run by run."""
    print(f"\nagainst the libraries' own DLPack tests (interleaved, median of {runs})")
    where = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    extra = pytest_dir(python)
    for lib, rel in OWN_TESTS.items():
        test = os.path.join(where, rel)
        if not os.path.exists(test):
            print(f"  {lib}: {rel} is not in this environment")
            continue
        own_env = dict(os.environ, PYTHONPATH=extra)
        val_env = dict(os.environ, PYTHONPATH=validator_path)
        own, val = [], []
        for _ in range(runs):
            own += timed([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], own_env, 1)
            val += timed([python, "-m", "validator", "-q", "--json", os.devnull, lib], val_env, 1)
        o, v = statistics.median(own), statistics.median(val)
        print(f"  {lib:<8} own tests {o:6.2f} s   python -m validator {v:6.2f} s   ratio {v / o:5.2f}")
        out["own_tests"].append({"library": lib, "own_tests_s": o, "validator_s": v, "ratio": v / o})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--validator", required=True, help="the dlpack-validate executable")
    ap.add_argument("--plugin", required=True, help="the reference plugin (libdlpv_reference.so)")
    ap.add_argument("--python-validator", help="build/python-validator (python -m validator launcher)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--isolation-filter", action="append", default=[],
                    help="filter for the isolation comparison (default: the whole suite)")
    ap.add_argument("--python-isolation-filter", action="append", default=None,
                    help="filter for the numpy isolation comparison (default python.capsule.*)")
    ap.add_argument("--smoke", action="store_true", help="one run each on narrow filters (CTest)")
    ap.add_argument("--peers-python", help="the peers' interpreter: also time the libraries' own DLPack tests")
    ap.add_argument("--python-path", help="with --peers-python: the folder holding the validator package "
                    "(build/python)")
    ap.add_argument("--json", help="write the figures to PATH")
    a = ap.parse_args()
    runs = 1 if a.smoke else a.runs
    narrow = ["--filter", "producer.deleter.*"] if a.smoke else []
    out = {"runs": runs, "cpus": os.cpu_count(), "suites": [], "isolation": [], "own_tests": []}
    with tempfile.TemporaryDirectory() as tmp:
        print(f"suite speed: median of {runs} run(s) on {os.cpu_count()} CPU(s)")
        out["suites"].append(measure("reference plugin, full suite" if not a.smoke else "reference plugin (smoke filter)",
                                     [a.validator, a.plugin] + narrow, runs, tmp))
        if a.python_validator:
            pnarrow = ["--filter", "python.capsule.*"] if a.smoke else []
            out["suites"].append(measure("python -m validator numpy", [a.python_validator, "numpy"] + pnarrow, runs, tmp))
            if not a.smoke:
                out["suites"].append(measure("python -m validator numpy torch",
                                             [a.python_validator, "numpy", "torch"], runs, tmp))

        print("\nper-case isolation overhead: (mode - none) / cases, medians")
        filters = []
        for f in (a.isolation_filter or ([] if not a.smoke else ["producer.deleter.*"])):
            filters += ["--filter", f]
        groups = [("reference plugin", [a.validator, a.plugin] + filters)]
        if a.python_validator:
            pf = a.python_isolation_filter or ["python.capsule.*"]
            groups.append(("numpy", [a.python_validator, "numpy"] + [x for f in pf for x in ("--filter", f)]))
        for name, cmd in groups:
            rows = {m: measure(f"{name}, --isolate={m}", cmd + [f"--isolate={m}"], runs, tmp)
                    for m in ("none", "worker", "case")}
            n = max(rows["none"]["cases"], 1)
            for m in ("worker", "case"):
                per = (rows[m]["wall_median_s"] - rows["none"]["wall_median_s"]) / n * 1e3
                per_rec = (rows[m]["record_median_s"] - rows["none"]["record_median_s"]) / n * 1e3
                print(f"  {name}: --isolate={m:<6} {per:8.3f} ms per case over --isolate=none by wall time, "
                      f"{per_rec:8.3f} ms by the records' durations ({n} cases)")
                out["isolation"].append({"subject": name, "mode": m, "cases": n, "overhead_ms_per_case": per,
                                         "overhead_ms_per_case_record": per_rec})
    if a.peers_python:
        own_tests(a.peers_python, a.python_path or os.path.join(os.path.dirname(a.validator), "python"), runs, out)
    if a.json:
        json.dump(out, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
