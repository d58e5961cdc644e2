#!/usr/bin/env python3
"""tests/hostile/chaos_soak.py: the supervisor under random worker deaths.

A clean run first gives every planned case its true status. Then, round after round until
--seconds is spent (at least one round), the same run again while this process hits the
worker at random moments: SIGKILL, SIGSEGV, SIGSTOP (a hang: the supervisor's timeout), SIGUSR1
(the chaos library then closes its protocol pipes) and SIGUSR2 (it forges a "pass" result into
them). Every round must end with:

- the supervisor alive: exit 0 or 1, a complete record;
- exactly one result per planned case (none missing, none twice, nothing "not run"), unless
  this process hit both the first worker and the second one the supervisor starts when the
  first cannot load ("the subject crashes at load" is then the right reading), or made the
  first worker forge a line or close its pipes while loading ("the subject breaks the worker
  protocol at load", reported at once: only the worker writes into its pipes), or hit each of
  the last N workers when the supervisor stops after N fresh workers in a row died before
  finishing a case: such a round is reported, not judged on its missing cases;
- no false pass: a case passes only if it passes in the clean run, and otherwise ends with
  its clean status or crash/timeout/error;
- the supervisor's peak resident memory under --max-rss-mib.

Two rounds in three reuse one worker for every case; every third runs --isolate=case (a worker
per case) over the cases matching --case-filter (a process per case is slow). Prints the figures per round
(cases, hits by kind, results by status, incidents, wall time, peak supervisor RSS) and writes
them to OUT/soak.json. By hand, longer: --seconds 600.
"""
import argparse
import fnmatch
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

ACTIONS = [("SIGKILL", signal.SIGKILL, 3), ("SIGSEGV", signal.SIGSEGV, 3), ("SIGSTOP", signal.SIGSTOP, 1),
           ("close_pipes", signal.SIGUSR1, 2), ("forge", signal.SIGUSR2, 2)]


def key(r):
    return (r["id"], r["subject"], r.get("peer"))


def children(pid):
    """Direct children of pid (the supervisor's workers)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(name))
        except (OSError, IndexError, ValueError):
            continue
    return out


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def chaos(proc, rng, hits, peak, min_ms, max_ms, young_s, order, hit_pids):
    seen, stopped = {}, set()
    while proc.poll() is None:
        time.sleep(rng.uniform(min_ms, max_ms) / 1000.0)
        peak[0] = max(peak[0], rss_kib(proc.pid))
        now = time.monotonic()
        # A stopped worker is left alone, so that the supervisor's timeout (not our next hit)
        # is what ends it.
        workers = [w for w in children(proc.pid) if w not in stopped]
        for w in workers:
            if w not in seen:
                seen[w] = now
                order.append(w)
        if not workers:
            continue
        w = max(workers, key=lambda p: seen[p])
        # Mostly hit workers that are past their start (mid-run); sometimes at once (loading).
        if now - seen[w] < young_s and rng.random() < 0.8:
            continue
        name, sig, _ = rng.choices(ACTIONS, weights=[a[2] for a in ACTIONS])[0]
        try:
            os.kill(w, sig)
            hits[name] = hits.get(name, 0) + 1
            hit_pids.setdefault(w, []).append(name)
            if sig == signal.SIGSTOP:
                stopped.add(w)
        except ProcessLookupError:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--subject", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=0.5, help="the validator's --timeout per case")
    ap.add_argument("--min-ms", type=float, default=5.0)
    ap.add_argument("--max-ms", type=float, default=60.0)
    ap.add_argument("--max-rss-mib", type=float, default=256.0)
    ap.add_argument("--case-filter", default="*float32*",
                    help="the cases of the --isolate=case rounds (a glob over case ids)")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    os.makedirs(args.out, exist_ok=True)

    clean_path = os.path.join(args.out, "clean.json")
    t_clean = time.monotonic()
    subprocess.run([args.validator, "-q", "--json", clean_path, "--timeout", "10"] + args.subject,
                   capture_output=True, text=True, timeout=600)
    t_clean = time.monotonic() - t_clean
    clean_record = json.load(open(clean_path))
    clean = {key(r): r["status"] for r in clean_record["results"]}
    # The hits follow the validator's pace, not the wall clock: on a busy machine (CPUs
    # oversubscribed) every step, loading a worker included, takes longer, and hits at a fixed
    # rate would land mostly in loading, where two deaths in a row rightly read as a library
    # that crashes at load. The intervals (and the age under which a worker counts as still
    # loading) are scaled by how much slower than a quiet machine (2 ms a case) the clean run was.
    slow = max(1.0, t_clean / max(1, len(clean)) / 0.002)
    min_ms, max_ms, young_s = args.min_ms * slow, args.max_ms * slow, 0.02 * slow
    print(f"seed {seed}: {len(clean)} cases planned on {len(args.subject)} subjects "
          f"({sum(1 for s in clean.values() if s == 'fail')} fail in the clean run, {t_clean:.1f} s: {slow:.1f} x a quiet "
          f"machine's pace; hits every {min_ms:.0f}-{max_ms:.0f} ms, workers younger than {young_s * 1000:.0f} ms mostly spared)")

    rounds, problems = [], []
    t_end = time.monotonic() + args.seconds
    n, extra = 0, 0
    while n == 0 or time.monotonic() < t_end or (all(r["excused"] for r in rounds) and extra < 8):
        if time.monotonic() >= t_end and n > 0:
            # Every round so far was excused: the machine is slower now than when the clean run
            # measured its pace (another job started beside it). Go on with the hits twice as far
            # apart, until a round is judged (at most 8 more): a busy machine is never a failure.
            extra += 1
            min_ms, max_ms, young_s = min_ms * 2, max_ms * 2, young_s * 2
            print(f"every round so far excused: round {n} with hits every {min_ms:.0f}-{max_ms:.0f} ms")
        isolate = "case" if n % 3 == 2 else "worker"
        filters = ["--filter=" + args.case_filter] if isolate == "case" else []
        planned = {k: v for k, v in clean.items() if not filters or fnmatch.fnmatchcase(k[0], args.case_filter)}
        path = os.path.join(args.out, f"round{n}.json")
        if os.path.exists(path):
            os.remove(path)
        # One lane (-j 1): the excuses below read the workers in the order they were started,
        # which is one lane's order (e2e.jobs covers crashes and hangs across lanes).
        hits, peak, order, hit_pids = {}, [0], [], {}
        t0 = time.monotonic()
        proc = subprocess.Popen([args.validator, "-q", "--json", path, "--timeout", str(args.timeout),
                                 "--load-timeout", "5", "--isolate", isolate, "-j", "1"] + filters + args.subject,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        thread = threading.Thread(target=chaos, args=(proc, rng, hits, peak, min_ms, max_ms, young_s, order, hit_pids))
        thread.start()
        out, err = proc.communicate(timeout=1800)
        thread.join()
        wall = time.monotonic() - t0
        bad = []
        if proc.returncode not in (0, 1):
            bad.append(f"exit {proc.returncode} (negative: the supervisor died of that signal); {err.strip()[-300:]}")
        record = None
        try:
            record = json.load(open(path))
        except (OSError, ValueError) as e:
            bad.append(f"no record: {e}")
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
        # The supervisor tries a second worker when the first cannot load, and then concludes
        # that the subject crashes at load. When this process hit both of those workers, that
        # conclusion is the right one (it is what a library that dies at load looks like), not
        # a fault of the supervisor: the round is reported and not judged.
        # A line forged into the pipes (or the pipes closed) by the last worker, while it loads,
        # is the subject itself breaking the protocol at load, which the supervisor reports
        # at once (nothing from outside the worker writes into its pipes): reported, not judged.
        # Likewise when it gives up after N fresh workers in a row died before finishing a case
        # ("the subject ends its own process") and this process hit the last N workers it saw.
        reason = (record or {}).get("not_run") and (record["not_run"][0].get("reason") or "") or ""
        fruitless = re.search(r"(\d+) fresh workers in a row died", reason)
        load_excuse = " at load " in reason and len(order) >= 2 and order[0] in hit_pids and order[1] in hit_pids
        protocol_excuse = "breaks the worker protocol at load" in reason and len(order) >= 1 and \
            any(a in ("forge", "close_pipes") for a in hit_pids.get(order[-1], []))
        run_excuse = bool(fruitless) and len(order) >= int(fruitless.group(1)) and \
            all(w in hit_pids for w in order[-int(fruitless.group(1)):])
        excused = load_excuse or protocol_excuse or run_excuse
        if excused:
            print(f"round {n}: " + ("both of the first two workers were hit while loading; the supervisor rightly "
                                    "reported a subject that dies at load" if load_excuse else
                                    "the worker loading the subjects was made to write into (or close) its pipes; the "
                                    "supervisor rightly reported a subject that breaks the protocol at load"
                                    if protocol_excuse else
                                    f"the last {fruitless.group(1)} workers were all hit before they finished a case; "
                                    "the supervisor rightly stopped the run") + " (round not judged)")
            bad = [b for b in bad if not b.startswith(("results for ", "not run: "))]
        row = {"round": n, "excused": bool(excused), "isolate": isolate, "cases": len(planned), "hits": hits, "hits_total": sum(hits.values()),
               "results": counts, "incidents": incidents, "wall_s": round(wall, 2),
               "supervisor_peak_rss_kib": rss, "sampled_peak_rss_kib": peak[0], "exit": proc.returncode,
               "problems": bad[:10]}
        rounds.append(row)
        print(f"round {n} ({isolate}): {row['hits_total']} hits {hits}, results {counts}, "
              f"{incidents} incidents, {wall:.1f} s, supervisor peak RSS {rss} KiB, exit {proc.returncode}"
              + ("" if not bad else "\n  PROBLEMS: " + "\n  ".join(bad[:10])))
        problems += [f"round {n}: {b}" for b in bad]
        n += 1

    if all(r["excused"] for r in rounds):
        problems.append("every round was excused (the chaos killed the loading workers each time): nothing was judged")
    total_hits = sum(r["hits_total"] for r in rounds)
    summary = {"seed": seed, "rounds": rounds, "cases_total": sum(r["cases"] for r in rounds),
               "results_total": sum(sum(r["results"].values()) for r in rounds),
               "incidents_total": sum(r["incidents"] for r in rounds), "hits_total": total_hits,
               "wall_s": round(sum(r["wall_s"] for r in rounds), 1),
               "peak_supervisor_rss_kib": max(r["supervisor_peak_rss_kib"] for r in rounds)}
    json.dump(summary, open(os.path.join(args.out, "soak.json"), "w"), indent=2)
    hits_by = {}
    for r in rounds:
        for k, v in r["hits"].items():
            hits_by[k] = hits_by.get(k, 0) + v
    summary["hits_by_kind"] = hits_by
    print(f"soak: {len(rounds)} rounds, {summary['cases_total']} cases planned, {summary['results_total']} results, "
          f"{summary['incidents_total']} incidents, {total_hits} hits {hits_by}, "
          f"{summary['wall_s']} s, peak supervisor RSS {summary['peak_supervisor_rss_kib']} KiB, seed {seed}")
    if problems:
        print("FAIL")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
