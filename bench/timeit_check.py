#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Cross-check of the bench method (issue 6): the `python.from_dlpack` figures of
`python -m validator bench` against Python's own timeit of the same call, and the
`python.dunder_dlpack.legacy` figure against timeit of `x.__dlpack__()` (the capsule dropped
unconsumed, so its destructor runs the deleter: the same work the bench route does in C).

usage: PYTHONPATH=build/python bench/timeit_check.py [PKG ...] [--rounds 5] [--json OUT.json]
       (default packages: numpy torch)

timeit runs with the GC off (its default), like the bench's Python routes; both report the
median over repeated batches of per-call nanoseconds. `diff` compares timeit with the bench's
raw figure (both include the cost of making the call); the bench's net figure also has its
C loop's overhead (a few ns) removed.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit


def percentile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def per_call_ns(stmt, env, batches=21, target_s=0.005):
    """(median, p10) of per-call ns over batches of about target_s, as the bench computes them."""
    t = timeit.Timer(stmt, globals=env)
    n, took = t.autorange()  # n calls took >= 0.2 s; scale to about target_s per batch
    n = max(1, int(n * target_s / took))
    t.timeit(n)  # warm-up
    per = [x / n * 1e9 for x in t.repeat(repeat=batches, number=n)]
    return percentile(per, 0.5), percentile(per, 0.1)


def bench_once(packages, path, batch_ms):
    subprocess.run([sys.executable, "-m", "validator", "bench", *packages, "--json", path, "-q",
                    "--batch-ms", str(batch_ms)],
                   check=False, stdout=subprocess.DEVNULL)
    return json.load(open(path))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("packages", nargs="*", default=["numpy", "torch"])
    ap.add_argument("--rounds", type=int, default=5,
                    help="bench runs and timeit runs, interleaved; medians of the rounds are compared "
                         "(a busy 2-core machine drifts between runs)")
    ap.add_argument("--batch-ms", type=float, default=5.0, help="batch length for both (default 5)")
    ap.add_argument("--json", help="write the comparison to PATH")
    a = ap.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "bench.json")

    from validator.adapters import resolve
    import importlib
    adapters = [resolve(s) for s in a.packages]
    arrays = [ad.make((16,), (2, 32)) for ad in adapters]

    def call_of(r, subjects):
        """(label, stmt, globals) of the Python call a bench route measures, or None."""
        if r["route"] == "python.from_dlpack":
            ad = adapters[r["peer"]]
            f = getattr(importlib.import_module(ad.module_name), "from_dlpack")
            return (f"{ad.module_name}.from_dlpack(x: {subjects[r['subject']]['name'].split()[0]})", "f(x)",
                    {"f": f, "x": arrays[r["subject"]]})
        if r["route"] == "python.dunder_dlpack.legacy":
            return (f"x.__dlpack__() (x: {subjects[r['subject']]['name'].split()[0]})", "x.__dlpack__()",
                    {"x": arrays[r["subject"]]})
        return None

    figures = {}  # label -> {"raw": [...], "net": [...], "timeit": [...]}
    cal = []
    for _ in range(a.rounds):
        rec = bench_once(a.packages, path, a.batch_ms)
        cal.append(rec["bench"]["calibration"]["raw_ns"]["median"])
        for r in rec["bench"]["routes"]:
            call = r["status"] == "ok" and call_of(r, rec["subjects"])
            if not call:
                continue
            label, stmt, env = call
            f = figures.setdefault(label, {"raw": [], "net": [], "timeit": [], "raw10": [], "timeit10": []})
            f["raw"].append(r["raw_ns"]["median"])
            f["net"].append(r["net_ns"]["median"])
            f["raw10"].append(r["raw_ns"]["p10"])
            tm, t10 = per_call_ns(stmt, env, target_s=a.batch_ms / 1000)
            f["timeit"].append(tm)
            f["timeit10"].append(t10)

    med = statistics.median
    print(f"{a.rounds} interleaved rounds; each figure is the median over rounds of a median over "
          f"21 batches")
    print(f"bench harness overhead (subtracted): {med(cal):.1f} ns/op")
    print(f"{'call':<40} {'bench raw':>10} {'bench net':>10} {'timeit':>10} {'diff':>7}   "
          f"{'bench p10':>10} {'timeit p10':>10} {'diff':>7}")
    worst, worst10, rows = 0.0, 0.0, []
    for label, f in figures.items():
        raw, net, t = med(f["raw"]), med(f["net"]), med(f["timeit"])
        raw10, t10 = med(f["raw10"]), med(f["timeit10"])
        diff, diff10 = (t - raw) / raw * 100, (t10 - raw10) / raw10 * 100
        worst, worst10 = max(worst, abs(diff)), max(worst10, abs(diff10))
        rows.append({"call": label, "bench_raw_ns": raw, "bench_net_ns": net, "timeit_ns": round(t, 1),
                     "diff_percent": round(diff, 1), "bench_raw_p10_ns": raw10,
                     "timeit_p10_ns": round(t10, 1), "diff_p10_percent": round(diff10, 1)})
        print(f"{label:<40} {raw:>10.1f} {net:>10.1f} {t:>10.1f} {diff:>+6.1f}%   "
              f"{raw10:>10.1f} {t10:>10.1f} {diff10:>+6.1f}%")
    loop, _ = per_call_ns("pass", {})
    print(f"(timeit's own loop, included in its figures: {loop:.1f} ns per call)")
    print(f"largest difference: medians {worst:.1f}%, p10 {worst10:.1f}% (target: within 10%; "
          f"on a busy machine the p10, the figure least touched by other processes, is the fair one)")
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
