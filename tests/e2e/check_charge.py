#!/usr/bin/env python3
"""tests/e2e/check_charge.py: a pair finding is charged to the library that broke the rule.

The reference plugin (subject 0), a producer that writes its strides in bytes (subject 1) and
a consumer that ignores strides (subject 2) run their pair cases. Expected, in every report:
  - the record's charged_to names subject 1 only as producer, subject 2 only as consumer, and
    never the reference, which breaks nothing;
  - the text summary's counts for the reference have no fail; the findings are listed under
    the mutants, with the pair and the side named;
  - JUnit: the reference's suite has no failure; pair suites' failure messages begin with the
    library charged;
  - a written baseline's pair entries say which end is charged;
  - progress names libraries, not indexes;
  - next steps name a command that runs one case again, and that command does run it.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--producer-mutant", required=True)
    ap.add_argument("--consumer-mutant", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    rec_path, xml_path, base_path = (os.path.join(a.workdir, n) for n in ("run.json", "run.xml", "written.json"))
    cmd = [a.validator, a.reference, a.producer_mutant, a.consumer_mutant, "--filter", "pair.*",
           "--json", rec_path, "--junit", xml_path, "--write-baseline", base_path]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, DLPV_PROGRESS_SECONDS="0"))
    if p.returncode != 1:
        sys.exit(f"expected exit 1 (the mutants break pair cases), got {p.returncode}\n{p.stderr}")
    rec = json.load(open(rec_path))
    problems = []
    seen = set()
    for r in rec["results"]:
        if r["status"] in ("pass", "skip"):
            if r["charged_to"] is not None and r["role"] == "pair":
                problems.append(f"{r['id']} {r['status']} is charged: {r['charged_to']}")
            continue
        c = r["charged_to"]
        if c is None:
            problems.append(f"{r['id']} {r['subject']}->{r['peer']} {r['status']} is charged to nobody")
            continue
        seen.add((c["subject"], c["as"]))
        if (c["subject"], c["as"]) not in ((1, "producer"), (2, "consumer")):
            problems.append(f"{r['id']} {r['subject']}->{r['peer']} {r['status']} charged to {c}")
    if seen != {(1, "producer"), (2, "consumer")}:
        problems.append(f"charges seen: {sorted(seen)}; expected subject 1 as producer and subject 2 as consumer")

    text = p.stdout
    ref_block = text.split("subject 0:")[1].split("subject 1:")[0]
    if " fail " in ref_block or "crash" in ref_block:
        problems.append("the reference's counts include a finding:\n" + ref_block)
    for needle in ("charged to mutant strides_in_bytes", "(the producer)", "(the consumer)", "pairs: ",
                   "next steps:", "run one case again"):
        if needle not in text:
            problems.append(f"the summary lacks {needle!r}")
    if "@1->" in p.stderr or "@0->" in p.stderr:
        problems.append("progress names subjects by index: " + p.stderr[:300])
    if " -> " not in p.stderr:
        problems.append("progress does not name the pair's libraries: " + p.stderr[:300])

    root = ET.parse(xml_path).getroot()
    for suite in root.iter("testsuite"):
        name = suite.get("name", "")
        if name.startswith("dlpv-reference") or name.startswith("reference"):
            if suite.get("failures") != "0" or suite.get("errors") != "0":
                problems.append(f"the reference's JUnit suite {name!r} counts findings")
        for failure in suite.iter("failure"):
            if name.startswith("pair ") and not failure.get("message", "").startswith("[charged to "):
                problems.append(f"suite {name!r}: a failure message does not name the library charged")
    pair_entries = [e for e in json.load(open(base_path))["entries"] if "producer" in e.get("when", {})]
    if not pair_entries or not all(e.get("comment", "").startswith("charged to ") for e in pair_entries):
        problems.append("written baseline: pair entries without a 'charged to' comment")

    # The next step's command runs the case again.
    step = next((line for line in text.splitlines() if "run one case again" in line), "")
    again = step.split(": ", 1)[1] if ": " in step else ""
    if not again.startswith(a.validator):
        problems.append(f"the re-run command does not start with the program: {again!r}")
    else:
        q = subprocess.run(shlex.split(again) + ["--json", os.path.join(a.workdir, "again.json"), "-q"],
                           capture_output=True, text=True)
        ids = {r["id"] for r in json.load(open(os.path.join(a.workdir, "again.json")))["results"]}
        if q.returncode not in (0, 1) or len(ids) != 1:
            problems.append(f"the re-run command ran {sorted(ids)[:5]} (exit {q.returncode})")
    if problems:
        sys.exit("\n".join(problems))
    print(f"charges: {sorted(seen)}; reference uncharged; JUnit, baseline, progress and next steps agree")


if __name__ == "__main__":
    main()
