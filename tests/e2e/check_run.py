#!/usr/bin/env python3
"""tests/e2e/check_run.py: run dlpack-validate on one subject and check the verdicts.

--expect-all STATUS[,..]  every case must end with one of these statuses (the reference run)
--command "CMD ARGS"      run this command line instead of --validator (e.g. "python3 -m validator")
--expect GLOB=STATUS,...  cases matching a GLOB must end with its STATUS (first match wins)
                          and each GLOB must match at least one case: the proof table's claims.
                          What the fixture does to the other cases is pinned by the identity
                          manifest (tests/identity, identity.fixtures), not here; --reference
                          (the reference plugin's record) only tells a target this machine
                          cannot run (the reference skips it too) from a missed one. Without
                          --reference every case must match some GLOB.
                          STATUS may be STATUS:PHASE or STATUS:PHASE:TEXT (the hostile runs):
                          the case must also end in that phase (empty = any), and TEXT must
                          occur in its signal, message or observed values, or in
                          "charged:ID,....": the requirements it is charged to
--expect-incident KIND:TEXT  the record must hold an incident of KIND whose message contains
                          TEXT (repeatable; an incident counts as unexpected: exit 1)
--max-rss-mib N           the validator and its workers must have stayed under N MiB resident
--lawful                  a lawful fixture: besides --expect, no case may end fail, crash,
                          timeout or error
--from-capture DIR --fixture NAME  judge identity.capture's run of the fixture (DIR/raw/NAME.json,
                          made with -j 1 --deterministic and identity's --timeout) instead of
                          running it again, its results narrowed to the --extra=--filter globs; a
                          fixture the capture lacks is run as usual. The --strict run and the
                          reruns of slow cases are still made here.
--where-differs-from PLAIN --reference EMULATED  (the e2e.emulated.* proofs) only the cases the
                          emulated CUDA driver changes (their status differs between the two
                          reference runs) are run; the plain proof test judges the rest
The exit code must be 1 when an expected status is unexpected (fail, crash, timeout, error),
else 0; a run whose only targets are warnings must also exit 1 under --strict.

--timeout is short (1 s for the mutants) so that the hang fixtures end quickly. A case that
times out where no expectation allows a timeout is run again alone with --timeout 120 before it
is judged (the line RERUN says so), and that run's status stands: on a machine several times
slower than a quiet one (CI under load) a case of a second is no hang, and the validator's own
confirmation (alone, twice the time) cannot know the machine is slow.
"""
import argparse
import fnmatch
import json
import os
import re
import resource
import shlex
import subprocess
import sys

UNEXPECTED = {"fail", "crash", "timeout", "error"}
RERUN_TIMEOUT = 120.0


def run(args, extra):
    # Extra options first: a repeatable option (--filter) would swallow a following subject.
    prefix = shlex.split(args.command) if args.command else [args.validator]
    cmd = prefix + extra + ["--json", args.out, "--timeout", str(args.timeout),
                            "--load-timeout", str(args.load_timeout), args.subject]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace")
    return proc, json.load(open(args.out))


def captured(args):
    """The fixture's run from identity.capture (BUILD/identity/raw/NAME.json and NAME.run), or
    None when that capture does not hold it (a fixture identity leaves out, a capture not made).
    Its results narrowed to this test's --filter globs, and whether a case the filter left out
    ended unexpectedly (then the run's exit code answers for more than this test sees)."""
    base = os.path.join(args.from_capture, "raw", args.fixture)
    try:
        record = json.load(open(base + ".json"))
        run = json.load(open(base + ".run"))
    except (OSError, ValueError):
        return None
    made = os.path.getmtime(base + ".run")
    stale = [f for f in args.newer_than if os.path.exists(f) and os.path.getmtime(f) > made]
    if stale:  # a capture older than what it ran (ctest -FS identity_records after a rebuild)
        print(f"identity.capture's run of {args.fixture} is older than {stale[0]}: running it again")
        return None
    globs = [a.split("=", 1)[1] for a in args.extra if a.startswith("--filter=")]
    outside_unexpected = narrowed = False
    if globs:
        kept = [r for r in record["results"] if any(fnmatch.fnmatchcase(r["id"], g) for g in globs)]
        outside_unexpected = any(r["status"] in UNEXPECTED for r in record["results"] if r not in kept)
        narrowed = len(kept) != len(record["results"])
        record["results"] = kept
    proc = subprocess.CompletedProcess(args=run.get("arguments"), returncode=run["exit_code"], stdout="",
                                       stderr=run.get("stderr", ""))
    print(f"judging identity.capture's run of {args.fixture} ({' '.join(run.get('arguments') or [])}, -j 1)"
          + (f", narrowed to {' '.join(globs)}" if narrowed else ""))
    return proc, record, outside_unexpected


def timeout_allowed(args, cid):
    """Whether the expectations let this case end timeout (None: they do not name it)."""
    if args.expect_all:
        return "timeout" in args.expect_all.split(",")
    for item in args.expect.split(","):
        glob, _, status = item.partition("=")
        if item and fnmatch.fnmatchcase(cid, glob):
            return "timeout" in status.split(":", 1)[0].split("/")
    return None


def rerun_slow_cases(args, record):
    """Run the cases that timed out where no timeout is expected again, alone, with
    RERUN_TIMEOUT, and put their new results into `record`. Returns their ids."""
    slow = [r["id"] for r in record["results"]
            if r["status"] == "timeout" and timeout_allowed(args, r["id"]) is False]
    if not slow:
        return []
    kept = [a for a in args.extra if not a.startswith("--filter")]
    again = argparse.Namespace(**vars(args))
    again.timeout, again.out = RERUN_TIMEOUT, args.out + ".rerun.json"
    _, second = run(again, kept + [f"--filter={cid}" for cid in slow])
    fresh = {r["id"]: r for r in second["results"]}
    for i, r in enumerate(record["results"]):
        if r["id"] in fresh:
            print(f"RERUN: {r['id']} timed out under --timeout {args.timeout:g} (no hang is expected of it); "
                  f"alone with --timeout {RERUN_TIMEOUT:g} it ended {fresh[r['id']]['status']}")
            record["results"][i] = fresh[r["id"]]
    return slow


def main():
    ap = argparse.ArgumentParser()
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--validator")
    who.add_argument("--command")
    ap.add_argument("--subject", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reference")
    ap.add_argument("--expect", default="")
    ap.add_argument("--expect-all")
    ap.add_argument("--skip-ok-if", action="append", default=[],
                    help="with --expect-all: a skip whose reason contains this text is accepted "
                         "(e.g. CUDA cases on a machine without a GPU); repeatable")
    ap.add_argument("--timeout", type=float, default=10.0)
    # The fixtures load in milliseconds; a fixture that hangs while loading is waited for this
    # long (twice: the first worker's load is tried once more), not the validator's 120 s.
    ap.add_argument("--load-timeout", type=float, default=10.0)
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--expect-incident", action="append", default=[])
    ap.add_argument("--max-rss-mib", type=float)
    ap.add_argument("--lawful", action="store_true")
    ap.add_argument("--require-emulated-cuda", action="store_true",
                    help="the run must have used the emulated CUDA driver (environment.cuda.emulated), "
                         "and no case may skip for want of CUDA")
    ap.add_argument("--from-capture", metavar="DIR",
                    help="judge identity.capture's run of --fixture in DIR (BUILD/identity) instead of "
                         "running again; without that run there, run as usual")
    ap.add_argument("--where-differs-from", metavar="PLAIN_REFERENCE",
                    help="run only the cases whose status differs between this record (the reference's "
                         "plain run) and --reference (its run under the emulated CUDA driver); "
                         "expectations none of whose cases are among them are left to the plain run")
    ap.add_argument("--newer-than", action="append", default=[], metavar="FILE",
                    help="with --from-capture: the captured run counts only if made after FILE "
                         "(the validator, the subject)")
    ap.add_argument("--fixture", help="with --from-capture: the fixture's identity name (plugin.mut_X, fakearray.X)")
    args = ap.parse_args()

    only = None
    if args.where_differs_from:
        # The cases the emulated driver changes: their status differs between the reference's
        # plain run (WHERE_DIFFERS_FROM) and its run under the driver (--reference). The rest
        # end as in the plain run, whose proof test (e2e.mutant.NAME, e2e.lawful.NAME) judges them.
        plain = {r["id"]: r["status"] for r in json.load(open(args.where_differs_from))["results"]}
        emulated = {r["id"]: r["status"] for r in json.load(open(args.reference))["results"]}
        only = sorted(i for i in emulated if plain.get(i) != emulated[i])
        own = [a.split("=", 1)[1] for a in args.extra if a.startswith("--filter=")]
        if own:
            only = [i for i in only if any(fnmatch.fnmatchcase(i, g) for g in own)]
        if not only:
            print("none of this run's cases ends otherwise under the emulated driver: the plain run's "
                  "proof test judges them all")
            return 0
        args.extra = [a for a in args.extra if not a.startswith("--filter")] + [f"--filter={i}" for i in only]
        print(f"{len(only)} cases the emulated driver changes (of {len(emulated)}); the others are the plain run's")

    got = captured(args) if args.from_capture and args.fixture else None
    outside_unexpected = False
    if got:
        proc, record, outside_unexpected = got
        json.dump(record, open(args.out, "w"), indent=1)  # where a run of its own would have put it
    else:
        proc, record = run(args, args.extra)
    problems = []
    rerun = rerun_slow_cases(args, record)
    statuses = {r["id"]: r["status"] for r in record["results"]}
    if args.expect_all:
        allowed = set(args.expect_all.split(","))
        for cid, st in statuses.items():
            r = next(x for x in record["results"] if x["id"] == cid)
            if st == "skip" and any(text in r["message"] for text in args.skip_ok_if):
                continue
            if st not in allowed:
                problems.append(f"{cid}: expected {args.expect_all}, got {st}: {r['message']} "
                                f"(expected {r['expected']!r}, observed {r['observed']!r})")
        want_exit = 1 if allowed & UNEXPECTED else 0
    else:
        rules = [tuple(item.split("=", 1)) for item in args.expect.split(",") if item]
        reference = None
        if args.reference:
            reference = {r["id"]: r["status"] for r in json.load(open(args.reference))["results"]}
        used = set()
        verified = set()    # expected statuses actually observed
        unverified = []     # targets this machine cannot run (the reference skips them too)
        for cid, st in statuses.items():
            rule = next(((g, s) for g, s in rules if fnmatch.fnmatchcase(cid, g)), None)
            if rule:
                used.add(rule[0])
                want_status, want_phase, want_text = (rule[1].split(":", 2) + ["", ""])[:3]
                r = next(x for x in record["results"] if x["id"] == cid)
                seen = " ".join([r.get("signal") or "", r["message"], r.get("observed") or ""] +
                                [c.get("observed") or "" for c in r.get("checks", []) if c["status"] != "pass"] +
                                [f"charged:{','.join(r.get('requirements') or [])}."])
                wants = want_status.split("/")  # alternatives: "skip/pass"
                if st not in wants and st == "skip" and reference is not None and \
                        reference.get(cid) == "skip":
                    unverified.append(f"{cid} ({r['message'][:80]})")
                elif st not in wants:
                    problems.append(f"{cid}: expected {want_status} (planted bug), got {st}: {r['message']}")
                elif want_phase and r.get("phase", "") != want_phase:
                    problems.append(f"{cid}: expected phase {want_phase!r}, got {r.get('phase')!r}: {r['message']}")
                elif want_text and want_text not in seen:
                    problems.append(f"{cid}: expected {want_text!r} in {seen!r}")
                else:
                    verified.add(st)
            elif reference is None:
                problems.append(f"{cid}: no expectation matches it (got {st})")
        # In a run narrowed to the cases the emulated driver changes, a rule is left to the plain
        # run when it is the first match of none of them.
        first_of_only = {next((g for g, _ in rules if fnmatch.fnmatchcase(i, g)), None) for i in only or []}
        for g, _ in rules:
            if g not in used and only is not None and g not in first_of_only:
                print(f"expectation {g}: none of its cases changes under the emulated driver (the plain run's)")
            elif g not in used:
                problems.append(f"expectation {g} matched no case")
        targets = verified
        for u in unverified:
            print("UNVERIFIED HERE (the reference skips it too):", u)
        # The exit code answers for every case the run holds: a planted bug's collateral (a case
        # no rule names, ended unexpectedly) makes it 1 as the rules' targets do.
        want_exit = 1 if (targets & UNEXPECTED) or any(st in UNEXPECTED for st in statuses.values()) else 0
        if not (targets & UNEXPECTED) and "warn" in targets:
            strict_proc, _ = run(args, args.extra + ["--strict"])
            if strict_proc.returncode != 1:
                problems.append(f"--strict run exited {strict_proc.returncode}, expected 1")
    if args.lawful:
        for r in record["results"]:
            if r["status"] in UNEXPECTED:
                problems.append(f"{r['id']}: a lawful fixture ended {r['status']}: {r['message']} "
                                f"(expected {r.get('expected')!r}, observed {r.get('observed')!r})")
    if args.require_emulated_cuda:
        cuda = record.get("environment", {}).get("cuda", {})
        if not cuda.get("emulated"):
            problems.append(f"the emulated CUDA driver was not used: {cuda}")
        for r in record["results"]:
            if r["status"] == "skip" and re.search(r"no (usable )?CUDA|CUDA driver present but|only \d+ CUDA device",
                                                   r["message"]):
                problems.append(f"{r['id']}: skipped for want of CUDA under the emulated driver: {r['message']}")
    for want in args.expect_incident:
        kind, text = (want.split(":", 1) + [""])[:2]
        if not any(i.get("kind") == kind and text in (i.get("message") or "") for i in record.get("incidents", [])):
            problems.append(f"no incident of kind {kind!r} mentions {text!r}: {record.get('incidents')}")
    if args.expect_incident:
        want_exit = 1
    # A captured run narrowed to this test's filter holds cases the filter left out: its exit code
    # answers for all of them, so a 0 is expected only where none of them ended unexpectedly.
    if rerun:
        print(f"exit code not judged: {len(rerun)} case(s) were judged by their rerun, not by this run")
    elif outside_unexpected and want_exit == 0:
        print("exit code not judged: the captured run's cases outside this test's filter ended unexpectedly")
    elif proc.returncode != want_exit:
        problems.append(f"exit code {proc.returncode}, expected {want_exit}; stderr: {proc.stderr.strip()[:500]}")
    if not record.get("complete"):
        problems.append("run record is not complete")
    if args.max_rss_mib is not None:
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
        if peak > args.max_rss_mib:
            problems.append(f"peak resident memory {peak:.0f} MiB, limit {args.max_rss_mib:.0f} MiB")

    for p in problems:
        print("PROBLEM:", p)
    checked = len(statuses)
    print(f"{checked - min(len(problems), checked)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
