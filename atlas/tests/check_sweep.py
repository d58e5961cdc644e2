#!/usr/bin/env python3
"""atlas/tests/check_sweep.py (CTest atlas.sweep_shards): a small release sweep (small.tsv: two
NumPy releases and array-api-strict), run whole and in two shards; the shards' merged records
(`dlpack-validate report merge`) must hold the whole sweep's verdicts, result for result.
Then the store (incremental sweeps): the whole sweep again takes every release from the store
(no case runs) with the same verdicts; with one case's stored fingerprint changed, that case
alone runs again, and the verdicts are still the same.
Exit 77 (skipped) when a release cannot be installed (no PyPI and nothing cached)."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIELDS = ("id", "subject", "peer", "status", "message", "requirements", "charged_to")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--validator-path", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--partner-python", help="the peers' venv: torch 2.13.0 as every release's pair partner")
    a = ap.parse_args()
    atlas = [sys.executable, os.path.join(ROOT, "atlas", "sweep.py"), "run", "--releases", os.path.join(HERE, "small.tsv"),
             "--cli", a.cli, "--validator-path", a.validator_path, "--allow-dirty"]  # a test sweep, never published
    if a.partner_python:
        atlas += ["--partners", "torch", "--partner-python", a.partner_python]

    def sweep(out, *extra, store="store-whole"):
        p = subprocess.run(atlas + ["--out", out, "--store", os.path.join(a.work, store), *extra], capture_output=True,
                           text=True)
        sys.stdout.write(p.stderr)
        if p.returncode != 0:
            sys.exit(f"atlas.py run {' '.join(extra)}: exit {p.returncode}")
        m = json.load(open(os.path.join(out, "sweep-manifest.json")))
        if os.path.isabs(m["releases"]):
            sys.exit(f"the manifest names its release list by a path of this machine: {m['releases']}")
        missing = [l for l in m["lines"] if "not_installable" in l]
        if missing:
            print(f"SKIP: not installable here (no PyPI?): {missing[0]['subject']} {missing[0]['release']}: "
                  f"{missing[0]['not_installable']}")
            sys.exit(77)
        return m

    # A sweep to publish comes from committed code: with a work tree that differs from the commit
    # (here: an empty one), sweep.py refuses to run without --allow-dirty.
    import tempfile
    if os.path.isdir(os.path.join(ROOT, ".git")):
        with tempfile.TemporaryDirectory() as empty:
            env = dict(os.environ, GIT_DIR=os.path.join(ROOT, ".git"), GIT_WORK_TREE=empty)
            p = subprocess.run([x for x in atlas if x != "--allow-dirty"] + ["--out", os.path.join(a.work, "dirty")],
                               capture_output=True, text=True, env=env)
            if p.returncode != 2 or "uncommitted changes" not in p.stderr:
                sys.exit(f"sweep.py run from a checkout with uncommitted changes: exit {p.returncode}, {p.stderr[-300:]}")
            print("ok: sweep.py refuses a checkout with uncommitted changes (exit 2)")

    import shutil
    for d in ("store-whole", "store-shards"):  # each test starts with an empty store
        shutil.rmtree(os.path.join(a.work, d), ignore_errors=True)
    whole = sweep(os.path.join(a.work, "whole"))
    parts = [sweep(os.path.join(a.work, f"shard{k}"), "--shard", f"{k}/2", store="store-shards") for k in (1, 2)]
    merged = os.path.join(a.work, "merged.json")
    p = subprocess.run([a.cli, "report", "merge", *(os.path.join(a.work, f"shard{k}", "sweep.json") for k in (1, 2)),
                        "-o", merged, "-q"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"report merge: exit {p.returncode}: {p.stderr}")
    one = json.load(open(os.path.join(a.work, "whole", "sweep.json")))
    two = json.load(open(merged))
    problems = []
    names = [s["name"] for s in one["subjects"]]
    if sorted(names) != sorted(s["name"] for s in two["subjects"]) or len(names) != 3 + bool(a.partner_python):
        problems.append(f"subjects: whole {names}, merged {[s['name'] for s in two['subjects']]}")
    # subject indexes may differ (a shard's order): compare by subject name
    def keyed(rec):
        nm = [s["name"] for s in rec["subjects"]]
        return {(nm[r["subject"]], r["id"]): tuple(json.dumps(r.get(f), sort_keys=True) for f in FIELDS[3:6])
                for r in rec["results"]}
    k1, k2 = keyed(one), keyed(two)
    if k1 != k2:
        diff = sorted(set(k1.items()) ^ set(k2.items()))[:5]
        problems.append(f"verdicts differ ({len(k1)} vs {len(k2)} results): {diff}")
    if one["summary"]["counts"] != two["summary"]["counts"]:
        problems.append(f"counts {one['summary']['counts']} vs {two['summary']['counts']}")
    if [len(p["lines"]) for p in parts] != [2, 1]:
        problems.append(f"shard sizes {[len(p['lines']) for p in parts]}, expected [2, 1]")
    pairs = sum(1 for r in one["results"] if r.get("peer") is not None)
    if a.partner_python and not all(l.get("pairs", {}).get("torch", {}).get("results") for l in whole["lines"]):
        problems.append(f"a release ran no pair case with torch: {whole['lines']}")
    print(f"whole sweep: {len(k1)} results ({pairs} pair results) over {names}; two shards merged: "
          f"{'identical verdicts' if k1 == k2 else 'DIFFERENT'}; counts {two['summary']['counts']}")
    for line in whole["lines"]:
        print(f"  {line['subject']} {line['release']}: venv {line.get('size_mib')} MiB, install {line.get('install_s')} s "
              f"(cached after the first sweep), run {line.get('run_s')} s")
    # The store: nothing changed, nothing runs; one case changed, it alone runs.
    again = sweep(os.path.join(a.work, "again"))
    if not all(l.get("from_store") for l in again["lines"]):
        problems.append(f"a release ran again with nothing changed: {[l for l in again['lines'] if not l.get('from_store')]}")
    if keyed(json.load(open(os.path.join(a.work, "again", "sweep.json")))) != k1:
        problems.append("the sweep from the store has other verdicts than the sweep it stored")
    store = os.path.join(a.work, "store-whole")
    numpy = [d for d in os.listdir(store) if d.startswith("numpy-2.4.6-")][0]
    fps_path = os.path.join(store, numpy, "run.fp.json")
    fps = json.load(open(fps_path))
    case = sorted(fps)[0]
    fps[case] = "changed"
    json.dump(fps, open(fps_path, "w"))
    one_case = sweep(os.path.join(a.work, "one-case"))
    ran = {f"{l['subject']} {l['release']}": l.get("ran") if not l.get("from_store") else "store" for l in one_case["lines"]}
    if ran != {"numpy 1.26.4": "store", "numpy 2.4.6": "1 case(s) changed since the stored sweep",
               "array_api_strict 2.6.1": "store"}:
        problems.append(f"with {case}'s fingerprint changed, expected it alone to run on numpy 2.4.6: {ran}")
    if keyed(json.load(open(os.path.join(a.work, "one-case", "sweep.json")))) != k1:
        problems.append(f"the sweep that re-ran {case} has other verdicts")
    print(f"from the store: {sum(bool(l.get('from_store')) for l in again['lines'])} of {len(again['lines'])} releases, "
          f"{again['wall_s']} s (the first sweep {whole['wall_s']} s); one case changed: {ran}, {one_case['wall_s']} s")
    if problems:
        print("\n".join("FAIL: " + x for x in problems))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
