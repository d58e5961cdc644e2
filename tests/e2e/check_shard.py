#!/usr/bin/env python3
"""tests/e2e/check_shard.py: --shard K/N, `report merge` and `diff`.

For each front-end given (the C++ CLI on the reference plugin and a mutant, pair cases
included; python -m validator on two fake array variants):
  - the N shards' case ids are disjoint, together the whole selection, and balanced (their
    counts differ by at most one); an empty shard (more parts than cases) is a clean run;
  - `report merge` of the shards' records equals the single run's record in every result
    (id, subject, peer, status, message, requirements, charged_to) and in order, and in the
    summary's counts and exit code;
  - a merge of a record with a tampered copy of itself reports the conflict and exits 1; an
    identical duplicate is counted, not a conflict; records of different subjects are united
    with their indexes remapped;
  - bad --shard values are one line and exit 2.
Then `diff`: a record against itself is no regression (exit 0); the reference's record
against the mutant's lists the mutant's failures as regressions (exit 1), as text and Markdown;
records of different libraries are never an all-clear: the mutant's record against the
reference's says the subjects differ and exits 1 (with --allow-different-subjects: the fixes,
exit 0), and so does a record against one with a library more.
"""
import argparse
import json
import os
import subprocess
import sys

FIELDS = ("id", "subject", "peer", "status", "message", "requirements", "charged_to", "params")


def run(cmd, expect=None, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if expect is not None and p.returncode not in (expect if isinstance(expect, tuple) else (expect,)):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    return p


def key(r):
    return tuple(json.dumps(r.get(f), sort_keys=True) for f in FIELDS)


def check_front_end(label, base, subjects, filters, work, n, problems, env):
    os.makedirs(work, exist_ok=True)
    sel = sum((["--filter", f] for f in filters), [])
    full = os.path.join(work, "full.json")
    p_full = run(base + subjects + sel + ["--deterministic", "-q", "--json", full], expect=(0, 1), env=env)
    whole = json.load(open(full))
    parts = []
    for k in range(1, n + 1):
        path = os.path.join(work, f"shard{k}.json")
        run(base + subjects + sel + ["--deterministic", "-q", "--shard", f"{k}/{n}", "--json", path],
            expect=(0, 1), env=env)
        parts.append(path)
    ids = [sorted({r["id"] for r in json.load(open(p))["results"]}) for p in parts]
    listed = [run(base + ["--list", "--shard", f"{k}/{n}"] + sel, expect=0, env=env).stdout.split("\n") for k in range(1, n + 1)]
    counts = [len([l for l in ls if l.strip()]) for ls in listed]
    if max(counts) - min(counts) > 1:
        problems.append(f"{label}: shard sizes {counts} differ by more than one")
    flat = [i for part in ids for i in part]
    if len(flat) != len(set(flat)):
        problems.append(f"{label}: a case id ran in two shards")
    if set(flat) != {r["id"] for r in whole["results"]}:
        problems.append(f"{label}: the shards' ids are not the whole run's")
    for k, p in enumerate(parts, 1):
        if json.load(open(p))["options"].get("shard") != f"{k}/{n}":
            problems.append(f"{label}: shard {k}'s record does not say options.shard = {k}/{n}")

    merged = os.path.join(work, "merged.json")
    p_merge = run(base_cli + ["report", "merge"] + parts + ["-o", merged, "-q"], expect=(0, 1))
    m = json.load(open(merged))
    if p_merge.returncode != p_full.returncode:
        problems.append(f"{label}: merge exit {p_merge.returncode}, the single run's {p_full.returncode}")
    a, b = [key(r) for r in whole["results"]], [key(r) for r in m["results"]]
    if a != b:
        diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        problems.append(f"{label}: merged results differ from the single run's ({len(a)} vs {len(b)}; "
                        f"first at {diff}: {a[diff] if diff < len(a) else None} vs {b[diff] if diff < len(b) else None})")
    for f in ("counts", "total", "exit_code", "verdict"):
        if whole["summary"][f] != m["summary"][f]:
            problems.append(f"{label}: summary.{f} {whole['summary'][f]} (single) vs {m['summary'][f]} (merged)")
    if [s["name"] for s in whole["subjects"]] != [s["name"] for s in m["subjects"]]:
        problems.append(f"{label}: merged subjects {[s['name'] for s in m['subjects']]}")
    if m["merge"]["conflicts"] or m["merge"]["duplicates"]:
        problems.append(f"{label}: merge of disjoint shards reports {m['merge']}")
    print(f"{label}: {n} shards of {len(whole['results'])} results ({counts} cases each) merge into the single "
          f"run's record: {'yes' if a == b else 'NO'}; counts {m['summary']['counts']}")

    # an identical duplicate is not a conflict; a tampered one is
    dup = os.path.join(work, "dup.json")
    run(base_cli + ["report", "merge", parts[0], parts[0], "-o", dup, "-q"], expect=(0, 1))
    d = json.load(open(dup))
    if d["merge"]["conflicts"] or d["merge"]["duplicates"] != len(json.load(open(parts[0]))["results"]):
        problems.append(f"{label}: merging a record with itself: {d['merge']['duplicates']} duplicates, "
                        f"{len(d['merge']['conflicts'])} conflicts")
    rec = json.load(open(parts[0]))
    victim = next(r for r in rec["results"] if r["status"] == "pass")
    victim["status"], victim["message"] = "fail", "tampered"
    forged = os.path.join(work, "forged.json")
    json.dump(rec, open(forged, "w"))
    p = run(base_cli + ["report", "merge", parts[0], forged, "-o", os.path.join(work, "conflict.json"), "-q"], expect=1)
    if "conflict" not in p.stderr or victim["id"] not in p.stderr:
        problems.append(f"{label}: the conflict on {victim['id']} is not reported: {p.stderr[-500:]}")
    return whole


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--mutant", required=True)
    ap.add_argument("--python-validator", help="build/python-validator (with the fake array on PYTHONPATH)")
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    global base_cli
    base_cli = [a.validator]
    problems = []
    env = dict(os.environ)
    ref = check_front_end("dlpack-validate", [a.validator], [a.reference, a.mutant],
                          ["producer.*", "consumer.*", "pair.*"], os.path.join(a.workdir, "cli"), 3, problems, env)
    if a.python_validator:
        check_front_end("python -m validator", [a.python_validator],
                        # numpy beside the fake (variants are process-global: one per process)
                        ["numpy", "fakearray.variants:consumer_copy_ignored"],
                        ["python.kw.*", "python.consumer.*", "python.pair.*"],
                        os.path.join(a.workdir, "python"), 2, problems, env)

    # an empty shard: more parts than cases
    empty = os.path.join(a.workdir, "empty.json")
    p = run([a.validator, a.reference, "--filter", "consumer.alignment.malloc16.float32.legacy", "--shard", "2/2",
             "--json", empty, "-q"], expect=0)
    if json.load(open(empty))["results"]:
        problems.append("shard 2/2 of one case ran a case")

    # records of different subjects: united, indexes remapped
    w = os.path.join(a.workdir, "unite")
    os.makedirs(w, exist_ok=True)
    one, two, both = (os.path.join(w, n) for n in ("ref.json", "mut.json", "both.json"))
    run([a.validator, a.reference, "--filter", "consumer.*", "--deterministic", "-q", "--json", one], expect=0)
    run([a.validator, a.mutant, "--filter", "consumer.*", "--deterministic", "-q", "--json", two], expect=1)
    run([a.validator, "report", "merge", one, two, "-o", both, "-q"], expect=1)
    u = json.load(open(both))
    if len(u["subjects"]) != 2 or {r["subject"] for r in u["results"]} != {0, 1}:
        problems.append(f"uniting two records: subjects {len(u['subjects'])}, result subjects "
                        f"{sorted({r['subject'] for r in u['results']})}")
    bad_of_mut = sum(r["status"] == "fail" for r in json.load(open(two))["results"])
    if sum(r["status"] == "fail" and r["subject"] == 1 for r in u["results"]) != bad_of_mut:
        problems.append("uniting two records: the mutant's failures are not all under subject 1")

    # diff
    same = run([a.validator, "diff", one, one], expect=0)
    if "no regression" not in same.stdout:
        problems.append(f"diff of a record with itself: {same.stdout[-300:]}")
    md = os.path.join(w, "diff.md")
    d = run([a.validator, "diff", one, two, "--summary-md", md, "--allow-different-subjects"], expect=1)
    regressed = int(d.stdout.split("Regressions (")[1].split(": ")[1].split("\n")[0])
    if regressed != bad_of_mut:
        problems.append(f"diff reference -> mutant: {regressed} regressions, the mutant fails {bad_of_mut} cases")
    text = open(md).read()
    if "### Regressions" not in text or "| regressions |" not in text:
        problems.append("diff --summary-md: no Markdown regressions table")
    back = run([a.validator, "diff", two, one], expect=1)
    if "the subjects differ" not in back.stdout or "verdict: SUBJECTS DIFFER" not in back.stdout:
        problems.append(f"diff mutant -> reference (different libraries) does not say so: {back.stdout[-400:]}")
    # without --allow-different-subjects, different libraries are not listed case by case (--help)
    fwd = run([a.validator, "diff", one, two], expect=1)
    if "verdict: SUBJECTS DIFFER" not in fwd.stdout or " -> fail " in fwd.stdout or len(fwd.stdout.splitlines()) > 12:
        problems.append(f"diff reference -> mutant without --allow-different-subjects lists the matched cases: "
                        f"{fwd.stdout[:400]}")
    back = run([a.validator, "diff", two, one, "--allow-different-subjects"], expect=0)
    if f"Fixes (unexpected before, passing or expected now): {bad_of_mut}" not in back.stdout:
        problems.append(f"diff mutant -> reference does not list {bad_of_mut} fixes: {back.stdout[:400]}")
    more = run([a.validator, "diff", one, both], expect=1)
    if "verdict: SUBJECTS DIFFER" not in more.stdout or "no regression" in more.stdout:
        problems.append(f"diff reference -> reference and mutant gives an all-clear: {more.stdout[-400:]}")
    print(f"diff: reference -> mutant {regressed} regressions (exit 1); back: {bad_of_mut} fixes (exit 0)")

    for bad in ("0/2", "3/2", "1/0", "x/2", "1/2/3", "2"):
        p = run([a.validator, a.reference, "--shard", bad], expect=2)
        if len(p.stderr.strip().splitlines()) != 1 or "--shard" not in p.stderr:
            problems.append(f"--shard {bad}: {p.stderr!r}")
    p = run([a.validator, "report", "merge", "-o", os.path.join(w, "x.json")], expect=2)
    p = run([a.validator, "diff", one, os.path.join(w, "missing.json")], expect=2)
    if len(p.stderr.strip().splitlines()) != 1:
        problems.append(f"diff of a missing record: {p.stderr!r}")

    if problems:
        print("\n".join("FAIL: " + x for x in problems))
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
