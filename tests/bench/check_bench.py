#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Smoke check of `bench` (dlpack-validate bench / python -m validator bench): the command
runs, exits as expected, and its JSON record holds a well-formed bench section. Timings are
never asserted (CI machines are noisy); only the shape of the figures.

usage: check_bench.py --json OUT.json [--expect-route ROUTE]... [--iterations N] [--exit N]
                      [--also-written PATH]... -- COMMAND...
"""
import argparse
import json
import math
import os
import subprocess
import sys


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def stats_ok(s):
    return isinstance(s, dict) and all(
        isinstance(s.get(k), (int, float)) and math.isfinite(s[k]) for k in ("median", "p10", "p90"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--json", required=True)
    p.add_argument("--expect-route", action="append", default=[],
                   help="a route id that must be present and measured (status ok)")
    p.add_argument("--no-error", action="store_true", help="no route may end in error")
    p.add_argument("--iterations", type=int, default=0)
    p.add_argument("--exit", type=int, default=0)
    p.add_argument("--also-written", action="append", default=[])
    p.add_argument("--expect-compare", action="store_true",
                   help="--compare: every measured route has a ratio, none is a regression, no warnings, "
                        "and the table names the comparison and the ratios' geometric mean")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    for path in [a.json] + a.also_written:
        if os.path.exists(path):
            os.remove(path)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    print(proc.stdout)
    print(proc.stderr, file=sys.stderr)
    if proc.returncode != a.exit:
        fail(f"exit code {proc.returncode}, want {a.exit}")
    if "harness overhead" not in proc.stdout or "verdict:" not in proc.stdout:
        fail("the table on stdout lacks the harness-overhead line or the verdict")
    for path in a.also_written:
        if not os.path.getsize(path):
            fail(f"{path} was not written")
    rec = json.load(open(a.json))
    b = rec.get("bench")
    if not isinstance(b, dict):
        fail("the record has no bench section")
    cal = b.get("calibration") or {}
    if not stats_ok(cal.get("raw_ns")):
        fail(f"calibration without figures: {cal}")
    routes = b.get("routes")
    if not isinstance(routes, list) or not routes:
        fail("no routes")
    seen = {}
    for r in routes:
        st = r.get("status")
        if st not in ("ok", "unavailable", "error"):
            fail(f"route {r.get('route')}: status {st!r}")
        if st != "ok" and not r.get("reason"):
            fail(f"route {r.get('route')}: {st} without a reason")
        if st == "error" and a.no_error:
            fail(f"route {r.get('route')} failed: {r.get('reason')}")
        if st == "ok":
            if not (stats_ok(r.get("raw_ns")) and stats_ok(r.get("net_ns"))):
                fail(f"route {r.get('route')}: figures missing")
            if not isinstance(r.get("batch_ms"), (int, float)):
                fail(f"route {r.get('route')}: no batch_ms (the median batch's length)")
            if a.expect_compare and (not isinstance(r.get("ratio"), (int, float)) or r.get("regression") is not False):
                fail(f"route {r.get('route')}: --compare gave ratio {r.get('ratio')!r}, regression {r.get('regression')!r}")
            if a.iterations and r.get("iterations") != a.iterations:
                fail(f"route {r.get('route')}: {r.get('iterations')} iterations, asked for {a.iterations}")
        seen.setdefault(r.get("route"), set()).add(st)
    if a.expect_compare:
        base = b.get("baseline") or {}
        if base.get("mode") != "compare" or b.get("warnings"):
            fail(f"--compare: baseline section {base}, warnings {b.get('warnings')}")
        if "ratios only, no verdict" not in proc.stdout or "geometric mean" not in proc.stdout:
            fail("--compare: the table does not name the comparison and the ratios' geometric mean")
    for want in a.expect_route:
        if "ok" not in seen.get(want, set()):
            fail(f"route {want} not measured (saw {sorted(seen.get(want, []))})")
    print(f"ok: {len(routes)} routes, {sum(r['status'] == 'ok' for r in routes)} measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
