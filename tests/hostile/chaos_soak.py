#!/usr/bin/env python3
"""tests/hostile/chaos_soak.py: the supervisor under random worker deaths, replayable from a seed.

A clean run first gives every planned case its true status. Then round after round until
--seconds is spent (or exactly --rounds rounds), the same run again while the chaos library hits
itself on a plan drawn from the seed (DLPV_CHAOS_PLAN, tests/hostile/hostile_plugin.c
chaos_step): every call the validator makes into it during a case takes the next number of a
counter shared by the round's workers, and call k is hit when a hash of (round seed, k) says
so: SIGKILL, SIGSEGV, the protocol pipes closed, or a forged "pass" line written into them. No
hit is a hang: a timeout is confirmed in a fresh worker beside the lane, whose calls would
interleave with the lane's and end the replay (the hostile fixtures that hang prove timeouts). The hits follow the calls, not the clock, so a busy machine
changes nothing but the wall time, and `--seed S --rounds R` (printed at the end) replays the
run: every round prints a digest of its results (case, subject, peer, status, phase) and its
incidents, and --replay-first runs round 0 again and requires the same digest. Every round must
end with:

- the supervisor alive: exit 0 or 1, a complete record;
- exactly one result per planned case (none missing, none twice, nothing "not run"), unless the
  supervisor stopped after N fresh workers in a row died before finishing a case and the plan
  hit at least N workers lethally: such a round is reported, not judged on its missing cases;
- no false pass: a case passes only if it passes in the clean run, and otherwise ends with
  its clean status or crash/timeout/error;
- the supervisor's peak resident memory under --max-rss-mib.

Two rounds in three reuse one worker for every case; every third runs --isolate=case (a worker
per case) over the cases matching --case-filter (a process per case is slow). Prints the figures
per round (cases, hits by kind, results by status, incidents, wall time, peak supervisor RSS,
digest) and writes them to OUT/soak.json. By hand, longer: --seconds 600.
"""
import argparse
import fnmatch
import hashlib
import json
import os
import re
import subprocess
import sys
import time

LETHAL = ("SIGKILL", "SIGSEGV", "close_pipes")


def key(r):
    return (r["id"], r["subject"], r.get("peer"))


def digest(record):
    """What a replay must reproduce: every result's case, subject, peer, status and phase, and
    the incidents' kinds, in the record's order."""
    rows = [[r["id"], r["subject"], r.get("peer"), r["status"], r.get("phase", "")] for r in record["results"]]
    rows.append(sorted(i.get("kind", "") for i in record.get("incidents", [])))
    rows.append([n.get("count") for n in record.get("not_run", [])])
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def round_seed(seed, n):
    return (seed * 1_000_003 + n) % (1 << 62)


def play(args, seed, filters, isolate, tag):
    """One round: the validator under the plan of `seed`; (record or None, hits, problems...)."""
    path = os.path.join(args.out, f"{tag}.json")
    counter, log = os.path.join(args.out, f"{tag}.counter"), os.path.join(args.out, f"{tag}.hits")
    for p in (path, counter, log):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, DLPV_CHAOS_PLAN=f"{seed}:{args.permille}:{counter}:{log}")
    # One lane (-j 1): one case at a time, so the library's calls come in the run's order.
    t0 = time.monotonic()
    proc = subprocess.run([args.validator, "-q", "--json", path, "--timeout", str(args.timeout),
                           "--load-timeout", "5", "--isolate", isolate, "-j", "1"] + filters + args.subject,
                          capture_output=True, text=True, env=env, timeout=1800)
    wall = time.monotonic() - t0
    hits = []
    if os.path.exists(log):
        for line in open(log):
            k, action, pid = line.split()
            hits.append((int(k), action, int(pid)))
    bad = []
    if proc.returncode not in (0, 1):
        bad.append(f"exit {proc.returncode} (negative: the supervisor died of that signal); {proc.stderr.strip()[-300:]}")
    record = None
    try:
        record = json.load(open(path))
    except (OSError, ValueError) as e:
        bad.append(f"no record: {e}")
    return record, hits, bad, wall, proc.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--subject", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=None, help="exactly this many rounds (a replay), whatever the time")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--permille", type=int, default=15, help="the share of the library's calls hit, per mille")
    ap.add_argument("--replay-first", action="store_true", help="run round 0 again and require the same digest")
    ap.add_argument("--timeout", type=float, default=0.5, help="the validator's --timeout per case")
    ap.add_argument("--max-rss-mib", type=float, default=256.0)
    ap.add_argument("--case-filter", default="*float32*",
                    help="the cases of the --isolate=case rounds (a glob over case ids)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    os.makedirs(args.out, exist_ok=True)

    clean_path = os.path.join(args.out, "clean.json")
    t_clean = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k != "DLPV_CHAOS_PLAN"}
    subprocess.run([args.validator, "-q", "--json", clean_path, "--timeout", "10"] + args.subject,
                   capture_output=True, text=True, timeout=600, env=env)
    t_clean = time.monotonic() - t_clean
    clean_record = json.load(open(clean_path))
    clean = {key(r): r["status"] for r in clean_record["results"]}
    print(f"seed {seed}: {len(clean)} cases planned on {len(args.subject)} subjects "
          f"({sum(1 for s in clean.values() if s == 'fail')} fail in the clean run, {t_clean:.1f} s); "
          f"{args.permille} per mille of the library's calls hit", flush=True)

    rounds, problems, digests = [], [], []
    t_end = time.monotonic() + args.seconds
    n = 0

    def more():
        if args.rounds is not None:
            return n < args.rounds
        # Every round so far excused: go on (at most 8 more) until one is judged.
        return n == 0 or time.monotonic() < t_end or (all(r["excused"] for r in rounds) and n < len(rounds) + 8
                                                       and sum(r["excused"] for r in rounds) < 8)

    def judge(n, record, hits, bad, planned):
        counts, incidents, rss = {}, 0, 0
        if record is not None:
            if not record.get("complete"):
                bad.append("record not complete")
            keys = [key(r) for r in record["results"]]
            if len(keys) != len(set(keys)):
                bad.append(f"{len(keys) - len(set(keys))} cases have more than one result")
            if set(keys) != set(planned):
                bad.append(f"results for {len(set(keys))} cases, {len(planned)} planned "
                           f"(missing e.g. {sorted(set(planned) - set(keys))[:3]})")
            if record.get("not_run"):
                bad.append(f"not run: {record['not_run'][0].get('reason')}")
            for r in record["results"]:
                st = r["status"]
                counts[st] = counts.get(st, 0) + 1
                want = planned.get(key(r))
                if st == "pass" and want != "pass":
                    bad.append(f"false pass: {key(r)} is {want} in the clean run")
                elif st not in (want, "crash", "timeout", "error"):
                    bad.append(f"{key(r)}: {st}, clean run says {want}: {r['message'][:200]}")
            incidents = len(record.get("incidents", []))
            rss = (record.get("supervisor") or {}).get("max_rss_kib") or 0
            if rss > args.max_rss_mib * 1024:
                bad.append(f"supervisor peak RSS {rss} KiB over {args.max_rss_mib} MiB")
        # The supervisor gives up after N fresh workers in a row died before finishing a case
        # ("the subject ends its own process"): right, when the plan hit at least N workers.
        reason = (record or {}).get("not_run") and (record["not_run"][0].get("reason") or "") or ""
        fruitless = re.search(r"(\d+) fresh workers in a row died", reason)
        lethal_workers = {pid for _, action, pid in hits if action in LETHAL}
        excused = bool(fruitless) and len(lethal_workers) >= int(fruitless.group(1))
        if excused:
            print(f"round {n}: the plan hit at least {fruitless.group(1)} workers; the supervisor rightly stopped "
                  "the run (round not judged)")
            bad = [b for b in bad if not b.startswith(("results for ", "not run: "))]
        return counts, incidents, rss, excused, bad

    while more():
        isolate = "case" if n % 3 == 2 else "worker"
        filters = ["--filter=" + args.case_filter] if isolate == "case" else []
        planned = {k: v for k, v in clean.items() if not filters or fnmatch.fnmatchcase(k[0], args.case_filter)}
        rs = round_seed(seed, n)
        record, hits, bad, wall, rc = play(args, rs, filters, isolate, f"round{n}")
        counts, incidents, rss, excused, bad = judge(n, record, hits, bad, planned)
        by_kind = {}
        for _, action, _ in hits:
            by_kind[action] = by_kind.get(action, 0) + 1
        dg = digest(record) if record is not None else "-"
        digests.append(dg)
        row = {"round": n, "round_seed": rs, "excused": bool(excused), "isolate": isolate, "cases": len(planned),
               "hits": by_kind, "hits_total": len(hits), "results": counts, "incidents": incidents,
               "wall_s": round(wall, 2), "supervisor_peak_rss_kib": rss, "exit": rc, "digest": dg,
               "problems": bad[:10]}
        rounds.append(row)
        print(f"round {n} ({isolate}): {len(hits)} hits {by_kind}, results {counts}, {incidents} incidents, "
              f"{wall:.1f} s, supervisor peak RSS {rss} KiB, exit {rc}, digest {dg}"
              + ("" if not bad else "\n  PROBLEMS: " + "\n  ".join(bad[:10])), flush=True)
        problems += [f"round {n}: {b}" for b in bad]
        n += 1

    if args.replay_first:
        isolate = "worker"
        record, hits, bad, wall, rc = play(args, round_seed(seed, 0), [], isolate, "replay0")
        dg = digest(record) if record is not None else "-"
        print(f"replay of round 0: {len(hits)} hits, {wall:.1f} s, digest {dg}"
              + (" (the same)" if dg == digests[0] else f" DIFFERS from {digests[0]}"))
        if dg != digests[0]:
            problems.append(f"round 0 replayed from its seed gave digest {dg}, not {digests[0]}")

    if all(r["excused"] for r in rounds):
        problems.append("every round was excused (the plan killed workers before each finished a case): "
                        "nothing was judged")
    total_hits = sum(r["hits_total"] for r in rounds)
    hits_by = {}
    for r in rounds:
        for k, v in r["hits"].items():
            hits_by[k] = hits_by.get(k, 0) + v
    summary = {"seed": seed, "rounds": rounds, "cases_total": sum(r["cases"] for r in rounds),
               "results_total": sum(sum(r["results"].values()) for r in rounds),
               "incidents_total": sum(r["incidents"] for r in rounds), "hits_total": total_hits,
               "hits_by_kind": hits_by, "wall_s": round(sum(r["wall_s"] for r in rounds), 1),
               "peak_supervisor_rss_kib": max(r["supervisor_peak_rss_kib"] for r in rounds)}
    json.dump(summary, open(os.path.join(args.out, "soak.json"), "w"), indent=2)
    print(f"soak: {len(rounds)} rounds, {summary['cases_total']} cases planned, {summary['results_total']} results, "
          f"{summary['incidents_total']} incidents, {total_hits} hits {hits_by}, "
          f"{summary['wall_s']} s, peak supervisor RSS {summary['peak_supervisor_rss_kib']} KiB")
    print(f"replay this run: {' '.join(sys.argv[:1])} ... --seed {seed} --rounds {len(rounds)}")
    if problems:
        print("FAIL")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
