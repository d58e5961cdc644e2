#!/usr/bin/env python3
"""tests/e2e/check_explore.py: --explore N --seed S on one front-end (e2e.explore, python.explore).

With a subject whose planted bug a family's cover catches and whose other inputs also meet it:
1. --list with the same seed twice lists the same drawn ids, after the cover's, none of them a
   cover case; another seed draws other ids.
2. A run draws N inputs; every drawn input that did not pass carries its shrink (explore.shrunk_to):
   an input of the same family, no less simple on any axis, that ends the same way; and the
   simplest failing input named with --expect-shrunk is among them.
3. Either id replays alone with --filter ID and ends as the record says.
4. A correct subject: every drawn input passes or skips (exploration charges nothing by itself).
5. --examples FILE remembers: the exploring run keeps every drawn input that did not pass and its
   shrunk form in FILE, once each (a second exploring run adds nothing); a run without --explore
   replays FILE's ids with the record's statuses, a selection that leaves their family out runs
   none of them, and a baseline entry naming a drawn id by itself adds it to the run (xfail).

    check_explore.py --command 'python3 -m validator' --subject fakearray.variants:BUG
        --correct fakearray.variants:correct --filter 'python.input.consumer.*' --draws 24 --seed 3
        --expect-shrunk python.input.consumer.float32.fortran.k.a256.loading.once --workdir DIR
"""
import argparse
import json
import os
import shlex
import subprocess
import sys


def run(cmd, *args):
    p = subprocess.run(shlex.split(cmd) + list(args), capture_output=True, text=True, timeout=1200)
    return p


def fail(msg):
    print("check_explore: FAIL: " + msg)
    sys.exit(1)


def listed(a, subject, seed):
    p = run(a.command, subject, "--filter", a.filter, "--explore", str(a.draws), "--seed", str(seed), "--list")
    if p.returncode != 0:
        fail(f"--list exited {p.returncode}: {p.stderr.strip()}")
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--command", required=True)
    ap.add_argument("--subject", required=True)
    ap.add_argument("--correct", required=True)
    ap.add_argument("--filter", required=True)
    ap.add_argument("--draws", type=int, default=24)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--expect-shrunk", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)

    # 1. The draws are a function of the selection, N and the seed.
    plain = run(a.command, a.subject, "--filter", a.filter, "--list")
    cover = [line.split()[0] for line in plain.stdout.splitlines() if line.strip()]
    one, again, other = listed(a, a.subject, a.seed), listed(a, a.subject, a.seed), listed(a, a.subject, a.seed + 1)
    if one != again:
        fail("the same seed listed different draws")
    if one[: len(cover)] != cover or len(one) != len(cover) + a.draws:
        fail(f"expected the {len(cover)} cover cases then {a.draws} draws, listed {len(one)}")
    drawn = one[len(cover):]
    if set(drawn) & set(cover) or len(set(drawn)) != len(drawn):
        fail("a drawn id repeats a cover case or another draw")
    if drawn == other[len(cover):]:
        fail("another seed drew the same ids")
    print(f"check_explore: {len(cover)} cover cases, {a.draws} draws, stable for seed {a.seed}")

    # 2. A run with the bug: every drawn failure is shrunk.
    out = os.path.join(a.workdir, "explore.json")
    p = run(a.command, a.subject, "--filter", a.filter, "--explore", str(a.draws), "--seed", str(a.seed),
            "--deterministic", "-q", "--json", out)
    if p.returncode not in (0, 1):
        fail(f"the run exited {p.returncode}: {p.stderr.strip()[-400:]}")
    rec = json.load(open(out))
    if rec["options"].get("explore") != {"draws": a.draws, "seed": a.seed, "drawn": a.draws}:
        fail(f"options.explore is {rec['options'].get('explore')}")
    results = {r["id"]: r for r in rec["results"]}
    bad = [results[i] for i in drawn if results[i]["status"] not in ("pass", "skip")]
    if not bad:
        fail("no drawn input failed: the bug or the seed does not exercise the shrink")
    shrunk = set()
    for r in bad:
        s = r.get("explore", {}).get("shrunk_to")
        if not s:
            fail(f"{r['id']} ({r['status']}) has no explore.shrunk_to")
        if s["status"] != r["status"]:
            fail(f"{r['id']} shrank to {s['id']}, which ended {s['status']}, not {r['status']}")
        if s["id"] != r["id"] and s["id"] not in r["message"]:
            fail(f"{r['id']}'s message does not name its shrunk input {s['id']}")
        shrunk.add(s["id"])
    if a.expect_shrunk not in shrunk:
        fail(f"no drawn failure shrank to {a.expect_shrunk}; shrunk to {sorted(shrunk)}")
    for r in results.values():
        if r["id"] not in drawn and "explore" in r:
            fail(f"cover case {r['id']} is marked as drawn")
    print(f"check_explore: {len(bad)} drawn failures, shrunk to {sorted(shrunk)}")

    # 3. Replays by id.
    owner = next(r for r in bad if r["explore"]["shrunk_to"]["id"] == a.expect_shrunk)
    for rid, want in ((bad[0]["id"], bad[0]["status"]), (a.expect_shrunk, owner["explore"]["shrunk_to"]["status"])):
        out1 = os.path.join(a.workdir, "replay.json")
        run(a.command, a.subject, "--filter", rid, "--deterministic", "-q", "--json", out1)
        got = json.load(open(out1))["results"]
        if [r["id"] for r in got] != [rid]:
            fail(f"--filter {rid} ran {[r['id'] for r in got]}")
        if got[0]["status"] != want:
            fail(f"--filter {rid} replayed as {got[0]['status']}, the record says {want}")
    print("check_explore: both ids replay alone with the record's status")

    # 4. A correct subject: exploration finds nothing to charge.
    out2 = os.path.join(a.workdir, "correct.json")
    p = run(a.command, a.correct, "--filter", a.filter, "--explore", str(a.draws), "--seed", str(a.seed),
            "--deterministic", "-q", "--json", out2)
    rec = json.load(open(out2))
    wrong = [r["id"] + ":" + r["status"] for r in rec["results"] if r["status"] not in ("pass", "skip")]
    if wrong or p.returncode != 0:
        fail(f"the correct subject: exit {p.returncode}, {wrong}")
    # 5. --examples FILE: what an exploring run found is replayed by later runs.
    examples = os.path.join(a.workdir, "examples.txt")
    if os.path.exists(examples):
        os.remove(examples)
    for _ in range(2):
        p = run(a.command, a.subject, "--filter", a.filter, "--explore", str(a.draws), "--seed", str(a.seed),
                "--deterministic", "-q", "--examples", examples, "--json", os.path.join(a.workdir, "kept.json"))
        if p.returncode not in (0, 1):
            fail(f"the --examples run exited {p.returncode}: {p.stderr.strip()[-400:]}")
    kept = [line.split()[0] for line in open(examples) if line.split() and not line.startswith("#")]
    want = {r["id"] for r in bad} | shrunk
    if sorted(kept) != sorted(want) or len(kept) != len(set(kept)):
        fail(f"--examples kept {kept}, expected each of {sorted(want)} once")
    out3 = os.path.join(a.workdir, "replayed.json")
    run(a.command, a.subject, "--filter", a.filter, "--deterministic", "-q", "--examples", examples, "--json", out3)
    again = {r["id"]: r for r in json.load(open(out3))["results"]}
    first = {**{r["id"]: r["status"] for r in bad}, **{r["explore"]["shrunk_to"]["id"]: r["explore"]["shrunk_to"]["status"]
                                                        for r in bad}}
    for rid in kept:
        if rid not in again:
            fail(f"a run with --examples did not replay {rid}")
        if again[rid]["status"] != first[rid]:
            fail(f"{rid} replayed from --examples as {again[rid]['status']}, the exploring run saw {first[rid]}")
    if len(again) != len(cover) + len([k for k in kept if k not in cover]):
        fail(f"a run with --examples ran {len(again)} cases, expected the cover and the {len(kept)} kept inputs")
    out4 = os.path.join(a.workdir, "other_family.json")
    run(a.command, a.subject, "--filter", "*.zero_size.*", "--deterministic", "-q", "--examples", examples, "--json", out4)
    if any(r["id"] in kept for r in json.load(open(out4))["results"]):
        fail("a selection without the kept inputs' family ran them")
    base = os.path.join(a.workdir, "baseline.json")
    target = sorted(r["id"] for r in bad)[0]  # a drawn id: never a cover case
    json.dump({"schema": "dlpack-validate/baseline", "schema_version": 1,
               "entries": [{"case": target, "expect": first[target], "reason": "an input --explore found"}]},
              open(base, "w"))
    out5 = os.path.join(a.workdir, "baselined.json")
    run(a.command, a.subject, "--filter", a.filter, "--deterministic", "-q", "--baseline", base, "--json", out5)
    named = [r for r in json.load(open(out5))["results"] if r["id"] == target]
    if [r["status"] for r in named] != ["xfail"]:
        fail(f"a baseline naming {target} gave it {[r['status'] for r in named]}, expected one xfail")
    print(f"check_explore: --examples kept {len(kept)} inputs and replayed them; a baseline naming {target} ran it")
    print("check_explore: OK")


if __name__ == "__main__":
    main()
