#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Speed goals (issue "Speed IV", docs/bench.md): every figure of the goal table measured the same
way (interleaved round by round, so a busy moment hits both sides of a ratio alike; medians; the
same interpreter on both sides) and printed as one Markdown table, goal beside figure. Prints
figures; asserts nothing.

  bench/goals.py --build build --peers-python ~/.cache/dlpack-validate/peers-*/bin/python \\
      [--rounds 5] [--cold-build] [--ctest-log build/Testing/Temporary/LastTest.log] [--json OUT]

Rows:
  own tests    python -m validator numpy vs NumPy's own test_dlpack.py under pytest (the peers'
               interpreter; pytest from bench/suite_speed.py's pinned venv)
  matrix       python -m validator numpy torch jax pyarrow vs the sum of the four single runs,
               each with its baseline (bench/matrix_speed.py)
  isolation    --isolate=case vs --isolate=worker, per case (each case's own process), on the
               reference plugin (the validator's start-up alone) and on NumPy
  start-up     dlpack-validate --version (CPU), import validator._dlpack_validate (wall)
  cold build   (--cold-build) configure + cmake --build -j(cores) into a fresh folder, ccache off
  CTest        (--ctest-log) the span of the last CTest run, from its log's start and end lines
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import suite_speed  # noqa: E402  (its run timer, pytest's pinned venv, the own-tests paths)

LIBS = ["numpy", "torch", "jax", "pyarrow"]


def wall_of(cmd, env=None):
    """Seconds of one run of cmd (exit 0 or 1), timed as bench/suite_speed.py times its runs."""
    return suite_speed.timed(cmd, env, 1)[0]


def cpu_of(cmd, env=None):
    """CPU seconds (user + system) of one run of cmd, from the children's rusage."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cases_of(cmd, env, tmp):
    out = os.path.join(tmp, "count.json")
    subprocess.run(cmd + ["-q", "--json", out], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.load(open(out))["summary"]["total"]


def own_tests(py, pythonpath, rounds):
    where = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    test = os.path.join(where, suite_speed.OWN_TESTS["numpy"])
    if not os.path.exists(test):
        return None
    own_env = dict(os.environ, PYTHONPATH=suite_speed.pytest_dir(py))
    val_env = dict(os.environ, PYTHONPATH=pythonpath)
    own, val = [], []
    for _ in range(rounds):
        own.append(wall_of([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], own_env))
        val.append(wall_of([py, "-m", "validator", "-q", "--json", os.devnull, "numpy"], val_env))
    o, v = statistics.median(own), statistics.median(val)
    return {"own_tests_s": o, "validator_s": v, "ratio": v / o}


def matrix(py, pythonpath, rounds, tmp):
    out = os.path.join(tmp, "matrix.json")
    cmd = [sys.executable, os.path.join(HERE, "matrix_speed.py"), "--python", py, "--build", f"now={pythonpath}",
           "--rounds", str(rounds), "--libs", *LIBS, "--json", out]
    if os.path.isdir(os.path.join(ROOT, "baselines", "peers")):
        cmd += ["--baselines", os.path.join(ROOT, "baselines", "peers")]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.load(open(out))["now"]


def isolation(name, cmd, env, rounds, tmp):
    """(case - worker) / cases, wall, medians of interleaved rounds."""
    n = max(cases_of(cmd, env, tmp), 1)
    walls = {"worker": [], "case": []}
    for _ in range(rounds):
        for mode in walls:
            walls[mode].append(wall_of(cmd + [f"--isolate={mode}", "-q", "--json", os.devnull], env))
    w, c = statistics.median(walls["worker"]), statistics.median(walls["case"])
    return {"subject": name, "cases": n, "worker_s": w, "case_s": c, "per_process_ms": (c - w) / n * 1e3}


def startup(build, pythonpath, rounds):
    version, imports = [], []
    env = dict(os.environ, PYTHONPATH=pythonpath)
    for _ in range(rounds):
        version.append(cpu_of([os.path.join(build, "dlpack-validate"), "--version"]))
        imports.append(wall_of(["/usr/bin/python3", "-c", "import validator._dlpack_validate"], env))
    return {"version_cpu_ms": statistics.median(version) * 1e3, "import_wall_ms": statistics.median(imports) * 1e3}


def cold_build(tmp):
    folder = os.path.join(tmp, "cold")
    env = dict(os.environ, CCACHE_DISABLE="1")
    cores = str(os.cpu_count() or 2)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(["cmake", "-S", ROOT, "-B", folder, "-DPython3_EXECUTABLE=/usr/bin/python3",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", folder, "-j", cores], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "jobs": int(cores)}


def ctest_span(log):
    """Seconds between the 'Start testing:' and 'End testing:' lines of a CTest LastTest.log."""
    text = open(log, errors="replace").read()
    stamps = re.findall(r"^(?:Start|End) testing: (.+)$", text, re.M)
    if len(stamps) < 2:
        return None
    fmt = "%b %d %H:%M %Z"
    try:
        a, b = (datetime.strptime(s.strip(), fmt) for s in (stamps[0], stamps[-1]))
    except ValueError:
        return None
    passed = len(re.findall(r"^Test Passed\.$", text, re.M))
    failed = len(re.findall(r"^Test Failed\.$", text, re.M))
    return {"minutes": (b - a).total_seconds() / 60, "passed": passed, "failed": failed}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="the CMake build folder")
    ap.add_argument("--peers-python", required=True, help="the pinned peers' interpreter (scripts/peers.sh)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cold-build", action="store_true", help="also time a cold configure + build (minutes)")
    ap.add_argument("--ctest-log", help="a CTest LastTest.log whose span to report")
    ap.add_argument("--json", help="write the figures to PATH")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    pythonpath = os.path.join(build, "python")
    fig = {"cpus": os.cpu_count(), "rounds": a.rounds}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        print(f"goals: {a.rounds} interleaved round(s) on {os.cpu_count()} CPU(s)", file=sys.stderr, flush=True)
        o = fig["own_tests"] = own_tests(a.peers_python, pythonpath, a.rounds)
        if o:
            rows.append(("`python -m validator numpy` vs NumPy's own `test_dlpack.py`",
                         f"{o['validator_s']:.2f} s vs {o['own_tests_s']:.2f} s: {o['ratio']:.2f}x", "<= 1.0x",
                         o["ratio"] <= 1.0))
        print("goals: own tests done", file=sys.stderr, flush=True)
        m = fig["matrix"] = matrix(a.peers_python, pythonpath, a.rounds, tmp)
        rows.append((f"{len(LIBS)}-library matrix ({', '.join(LIBS)}) vs the four singles",
                     f"{m['matrix_s']:.2f} s vs {m['singles_s']:.2f} s: {m['matrix_over_singles']:.2f}x", "<= 1.0x",
                     m["matrix_over_singles"] <= 1.0))
        print("goals: matrix done", file=sys.stderr, flush=True)
        ref = [os.path.join(build, "dlpack-validate"), os.path.join(build, "tests", "libdlpv_reference.so"),
               "--filter", "producer.deleter.*"]
        py = [a.peers_python, "-m", "validator", "numpy", "--filter", "python.capsule.*"]
        iso = fig["isolation"] = [isolation("reference plugin", ref, None, a.rounds, tmp),
                                  isolation("numpy", py, dict(os.environ, PYTHONPATH=pythonpath), a.rounds, tmp)]
        for r in iso:
            rows.append((f"`--isolate=case`, per extra process ({r['subject']}, {r['cases']} cases)",
                         f"{r['per_process_ms']:.1f} ms wall", "<= 3 ms of the validator's own start-up",
                         r["per_process_ms"] <= 3.0 if r["subject"] == "reference plugin" else None))
        print("goals: isolation done", file=sys.stderr, flush=True)
        s = fig["startup"] = startup(build, pythonpath, a.rounds)
        rows.append(("start-up: `dlpack-validate --version`", f"{s['version_cpu_ms']:.0f} ms CPU",
                     "covers computed once, not per process", None))
        rows.append(("start-up: `import validator._dlpack_validate`", f"{s['import_wall_ms']:.0f} ms wall",
                     "covers computed once, not per process", None))
        if a.cold_build:
            c = fig["cold_build"] = cold_build(tmp)
            rows.append((f"cold build, configure + `cmake --build -j{c['jobs']}` (ccache off)",
                         f"{c['wall_s']:.0f} s wall, {c['cpu_s']:.0f} s CPU", "<= 100 s wall", c["wall_s"] <= 100))
    if a.ctest_log:
        c = fig["ctest"] = ctest_span(a.ctest_log)
        if c:
            rows.append((f"CTest, last run ({c['passed']} passed, {c['failed']} failed)", f"{c['minutes']:.0f} min",
                         "`.ci/run` <= 15 min quiet", c["minutes"] <= 15))
    print("| figure | now | goal | met |")
    print("|---|---|---|---|")
    for what, now, goal, met in rows:
        print(f"| {what} | {now} | {goal} | {'yes' if met else 'no' if met is not None else '-'} |")
    if a.json:
        json.dump(fig, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
