#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/e2e/check_jobs.py (CTest e2e.jobs): -j N changes the time, never the record.

Each subject runs at -j 1, -j 2 and -j 5 (more lanes than this machine may have cores) with
--deterministic; the records must be identical but for the supervisor's figures and for which
of two timeouts of one subject in one phase was the one run again (docs/design.md §7: the second
is then not run again; with several lanes which came first is timing). Subjects: the reference
plugin; a mutant that crashes in many cases (side workers, spares, fresh workers in every lane);
the hanging importer on its own filters (timeouts confirmed alongside the run, known hangs);
with --python-validator, the fake array library beside a variant whose cases crash.
Also: --jobs must be a whole number (exit 2, one line), and -j 1 uses one lane.
"""
import argparse
import json
import os
import re
import subprocess
import sys

KNOWN = re.compile(r" \((?:not run again: this subject's hang in phase '[^']*' already reproduced alone in a fresh "
                   r"worker with twice the time, in [^)]*|reproduced: run again alone in a fresh worker with twice "
                   r"the time, after the first try had timed out at [0-9.]+ s)\)")
WITHIN = re.compile(r"within [0-9.]+ s")  # 2T when confirmed, T when the hang was known
ADDRESS = re.compile(r"0x[0-9a-fA-F]{5,}")
PACE = re.compile(r"within [0-9.]+ s \(([0-9.]+) s, times this subject's pace [0-9.]+ on this busy machine\)")


def normal(rec):
    rec = dict(rec)
    for k in ("supervisor", "command_line", "duration_s", "started_at", "environment"):
        rec.pop(k, None)
    for r in rec["results"]:
        r.pop("output_tail", None)
        r.pop("duration_s", None)
        if r["status"] == "timeout":
            r.pop("first_try", None)
        r["message"] = KNOWN.sub(" (reproduced)", WITHIN.sub("within N s", PACE.sub(r"within \1 s", r.get("message", ""))))
        for c in r.get("checks", []):
            c.pop("observed", None)
    for i in rec.get("incidents", []):
        i.pop("output_tail", None)
    # addresses (the data pointers a check names) differ from process to process
    return json.loads(ADDRESS.sub("0xADDR", json.dumps(rec)))


def run(cmd, out, env):
    p = subprocess.run(cmd + ["--deterministic", "-q", "--json", out], capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode not in (0, 1):
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}: {p.stderr[-800:]}")
    return json.load(open(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--crashing", required=True, help="a mutant that crashes in many cases")
    ap.add_argument("--hanging", required=True, help="the hanging importer")
    ap.add_argument("--python-validator")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    env = dict(os.environ)
    subjects = [
        ("reference", [a.validator, a.reference]),
        ("crashing mutant beside the reference", [a.validator, "--timeout", "5", a.crashing, a.reference,
                                                  "--filter", "producer.*", "--filter", "pair.*"]),
        ("hanging importer", [a.validator, "--timeout", "1", "--filter=consumer.roundtrip.float32.*",
                              "--filter=consumer.byte_offset.*", "--filter=consumer.roundtrip.int8.*", a.hanging]),
    ]
    if a.python_validator:
        subjects.append(("fakearray with a crashing variant",
                         [a.python_validator, "--timeout", "5", "fakearray.variants:consumer_calls_null_deleter",
                          "--filter", "python.consumer.*", "--filter", "python.kw.*"]))
    problems = []
    for label, cmd in subjects:
        recs = {}
        for j in (1, 2, 5):
            recs[j] = run(cmd + ["-j", str(j)], os.path.join(a.workdir, f"{len(recs)}.json"), env)
        base = normal(recs[1])
        counts = recs[1]["summary"]["counts"]
        for j in (2, 5):
            other = normal(recs[j])
            if other != base:
                diff = [(x["id"], x["subject"], x.get("peer"), x["status"], y["status"])
                        for x, y in zip(base["results"], other["results"]) if x != y]
                keys = [k for k in base if base.get(k) != other.get(k)]
                problems.append(f"{label}: -j {j} differs from -j 1 in {keys}; results: {diff[:3]}")
        lanes = {j: (recs[j].get("supervisor") or {}).get("lanes") for j in recs}
        print(f"{label}: {len(recs[1]['results'])} results {counts}; -j 1, 2, 5 records identical: "
              f"{'yes' if not any(p.startswith(label + ':') for p in problems) else 'NO'}")
    # One lane at -j 1 (the figures are null in deterministic mode: ask without it).
    out = os.path.join(a.workdir, "one.json")
    subprocess.run([a.validator, "-q", "-j", "1", "--json", out, a.reference], capture_output=True, timeout=300)
    sup = json.load(open(out)).get("supervisor") or {}
    if sup.get("lanes") != 1 or sup.get("jobs") != 1:
        problems.append(f"-j 1: supervisor {sup}")
    subprocess.run([a.validator, "-q", "-j", "2", "--json", out, a.reference], capture_output=True, timeout=300)
    sup = json.load(open(out)).get("supervisor") or {}
    if sup.get("lanes") != 2:
        problems.append(f"-j 2 on {a.reference}: lanes {sup.get('lanes')} (expected 2)")
    for bad in ("-1", "two", "1.5"):
        p = subprocess.run([a.validator, "-j", bad, a.reference], capture_output=True, text=True, timeout=60)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or "--jobs" not in lines[0]:
            problems.append(f"-j {bad}: exit {p.returncode}, stderr {p.stderr.strip()[:200]!r} (expected exit 2, one line)")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
