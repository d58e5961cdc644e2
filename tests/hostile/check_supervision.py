#!/usr/bin/env python3
"""tests/hostile/check_supervision.py: run dlpack-validate on a library that attacks the
supervisor (dies on its own, forges protocol lines, crashes at load) and check that the run
ends as a run: exit 0 or 1 (never a signal, never 2/3), a complete record, every planned case
accounted for exactly once (a result, or a line in not_run), reports in every format, and the
verdicts asked for.

--expect GLOB=STATUS[:PHASE[:TEXT]],...  a result whose id matches GLOB must have STATUS (and
                          PHASE, and TEXT in its message/signal); first match wins; results no
                          rule matches are left alone unless --only-expected
--only-expected           every result must match a rule
--not-run N               exactly N cases reported as not run (default: any)
--incidents-min N         at least N incidents (no case in flight)
--or-dies-loading         ... unless both workers the supervisor starts died while loading (a
                          library that dies on its own a moment after dlopen can win that race
                          on a busy machine): then the one result must be subject.load, a crash
                          in a load step, with every other case not run
--no-pass                 no result may pass (the library's real verdict is not a pass)
--exit N                  the exit code must be N (default: 1)
"""
import argparse
import fnmatch
import json
import os
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    who = ap.add_mutually_exclusive_group(required=True)
    who.add_argument("--validator")
    who.add_argument("--command")
    ap.add_argument("--subject", required=True)
    ap.add_argument("--out", required=True, help="the JSON record; .html/.xml/.md beside it")
    ap.add_argument("--extra", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("--expect", default="")
    ap.add_argument("--only-expected", action="store_true")
    ap.add_argument("--not-run", type=int)
    ap.add_argument("--incidents-min", type=int, default=0)
    ap.add_argument("--or-dies-loading", action="store_true")
    ap.add_argument("--no-pass", action="store_true")
    ap.add_argument("--exit", type=int, default=1)
    args = ap.parse_args()

    prefix = shlex.split(args.command) if args.command else [args.validator]
    base = os.path.splitext(args.out)[0]
    outputs = ["--json", args.out, "--html", base + ".html", "--junit", base + ".xml",
               "--summary-md", base + ".md"]
    for path in [args.out, base + ".html", base + ".xml", base + ".md"]:
        if os.path.exists(path):
            os.remove(path)
    cmd = prefix + args.extra + outputs + ["--timeout", str(args.timeout), "--load-timeout", "10", args.subject]
    proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=600)
    problems = []
    if proc.returncode != args.exit:
        problems.append(f"exit code {proc.returncode}, expected {args.exit} "
                        f"(negative: killed by that signal); stderr: {proc.stderr.strip()[-500:]}")
    if "verdict:" not in proc.stdout:
        problems.append("no verdict line on stdout")
    try:
        record = json.load(open(args.out))
    except (OSError, ValueError) as e:
        print(f"FAIL: no readable record: {e}\n{' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return 1
    for path in [base + ".html", base + ".xml", base + ".md"]:
        if not os.path.exists(path):
            problems.append(f"{path} was not written")
    if not record.get("complete"):
        problems.append("the record is not complete")

    # Accounting: what --list plans for these filters, each exactly once.
    filters = [e for e in args.extra if e.startswith("--filter")]
    listed = subprocess.run(prefix + filters + ["--list"], capture_output=True, text=True)
    planned = [line.split()[0] for line in listed.stdout.splitlines() if line.strip()]
    results = record.get("results", [])
    ran = [r["id"] for r in results if r["id"] != "subject.load"]
    not_run = [c for n in record.get("not_run", []) for c in n.get("cases", [])]
    if len(ran) != len(set(ran)):
        problems.append("a case has more than one result")
    if sorted(ran + not_run) != sorted(planned):
        missing = sorted(set(planned) - set(ran) - set(not_run))
        extra = sorted(set(ran + not_run) - set(planned))
        problems.append(f"accounting: {len(planned)} planned, {len(ran)} results + {len(not_run)} not run; "
                        f"missing {missing[:5]}, unplanned {extra[:5]}")
    if args.not_run is not None and len(not_run) != args.not_run:
        problems.append(f"{len(not_run)} cases not run, expected {args.not_run}")
    incidents = record.get("incidents", [])
    died_loading = (args.or_dies_loading and [r["id"] for r in results] == ["subject.load"]
                    and results[0].get("status") == "crash" and len(not_run) == len(planned))
    if died_loading:
        print(f"both workers died while loading (subject.load: {results[0].get('message', '')[:120]}): "
              f"the incidents are not required")
    elif len(incidents) < args.incidents_min:
        problems.append(f"{len(incidents)} incidents, expected at least {args.incidents_min}")
    summary = record.get("summary", {})
    if summary.get("incidents", 0) != len(incidents) or summary.get("not_run", 0) != len(not_run):
        problems.append(f"summary counts {summary.get('incidents')} incidents / {summary.get('not_run')} not run, "
                        f"the record lists {len(incidents)} / {len(not_run)}")

    rules = [tuple(item.split("=", 1)) for item in args.expect.split(",") if item]
    matched = set()
    for r in results:
        st = r["status"]
        if args.no_pass and st == "pass":
            problems.append(f"{r['id']}: pass, but this library's real verdict is not a pass: {r['message']}")
        rule = next((x for x in rules if fnmatch.fnmatchcase(r["id"], x[0])), None)
        if rule is None:
            if args.only_expected:
                problems.append(f"{r['id']}: no expectation matches it (got {st}: {r['message']})")
            continue
        matched.add(rule[0])
        want_status, want_phase, want_text = (rule[1].split(":", 2) + ["", ""])[:3]
        seen = f"{r.get('message', '')} {r.get('signal') or ''}"
        if st != want_status:
            problems.append(f"{r['id']}: expected {want_status}, got {st}: {r['message']}")
        elif want_phase and r.get("phase", "") != want_phase:
            problems.append(f"{r['id']}: expected phase {want_phase!r}, got {r.get('phase')!r}")
        elif want_text and want_text not in seen:
            problems.append(f"{r['id']}: expected {want_text!r} in {seen!r}")
    for glob, _ in rules:
        if glob not in matched:
            problems.append(f"expectation {glob} matched no result")

    # What the record says must be in every report.
    if not_run or incidents:
        texts = {p: open(p, errors="replace").read() for p in [base + ".html", base + ".xml", base + ".md"]
                 if os.path.exists(p)}
        texts["stdout"] = proc.stdout
        for where, text in texts.items():
            if not_run and "not run" not in text.lower():
                problems.append(f"{where} does not mention the cases not run")
            if incidents and "incident" not in text.lower():
                problems.append(f"{where} does not mention the incidents")
        if not_run and len(proc.stdout.splitlines()) > 200:
            problems.append(f"the text summary has {len(proc.stdout.splitlines())} lines: not collapsed")

    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print(f"{len(results)} results {counts}, {len(not_run)} not run, {len(incidents)} incidents, "
          f"exit {proc.returncode}, supervisor peak RSS "
          f"{(record.get('supervisor') or {}).get('max_rss_kib')} KiB")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems))
        print("command: " + " ".join(shlex.quote(c) for c in cmd))
        print(proc.stdout[-3000:])
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
