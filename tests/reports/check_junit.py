#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Structural check of the JUnit writer with a real XML parser (stdlib only).

usage: check_junit.py RENDER_EXE DATA_DIR

For every data/NAME.json (with data/NAME.baseline.json applied when present) the report is
rendered, parsed, and checked against the rules CI consumers rely on: counts consistent with
the children, one testcase per result, three-decimal times, classname/name shape, at most one
verdict element per testcase with the type the status calls for, and no characters that
XML 1.0 forbids.
"""
import json
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
TIME = re.compile(r"^\d+\.\d{3}$")
VERDICT_TAGS = ("failure", "error", "skipped")


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def render(exe, record, fmt, baseline):
    cmd = [exe, str(record), fmt] + ([str(baseline)] if baseline.exists() else [])
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return out


def failing_requirement(r):
    """The requirement a result broke: its first fail (then warn) check's, else its first."""
    for wanted in ("fail", "warn"):
        for c in r.get("checks") or []:
            if c.get("status") == wanted and c.get("requirement"):
                return c["requirement"]
    return (r.get("requirements") or [None])[0]


def expected_element(status, strict, broken_req):
    """(tag, type) a result's status must produce, or None for a plain pass."""
    return {
        "pass": None,
        "fail": ("failure", broken_req or "fail"),
        "warn": ("failure", "warn") if strict else None,
        "xpass": ("failure", "xpass") if strict else None,
        "skip": ("skipped", "skip"),
        "xfail": ("skipped", "xfail"),
        "crash": ("error", "crash"),
        "timeout": ("error", "timeout"),
        "error": ("error", "harness-error"),
    }[status]


def check(exe, record_path):
    baseline = record_path.with_name(record_path.stem + ".baseline.json")
    raw = render(exe, record_path, "junit", baseline)
    text = raw.decode("utf-8")  # must be valid UTF-8
    if FORBIDDEN.search(text):
        fail(f"{record_path.name}: character not allowed in XML 1.0")
    if not text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n'):
        fail(f"{record_path.name}: missing XML declaration")
    root = ET.fromstring(raw)
    run = json.loads(render(exe, record_path, "json", baseline))
    strict = bool(run["options"].get("strict"))
    if root.tag != "testsuites":
        fail("root element is not <testsuites>")

    cases = [tc for suite in root.findall("testsuite") for tc in suite.findall("testcase")]
    routes = (run.get("bench") or {}).get("routes") or []  # the bench suite: one per route
    stale = (run.get("baseline_report") or {}).get("stale") or []  # the baseline suite: one each
    if len(cases) != len(run["results"]) + len(routes) + len(stale):
        fail(f"{record_path.name}: {len(cases)} testcases for {len(run['results'])} results, "
             f"{len(routes)} bench routes and {len(stale)} stale baseline entries")
    baseline_suites = [s for s in root.findall("testsuite") if s.get("name") == "dlpack-validate baseline"]
    if len(baseline_suites) != (1 if stale else 0):
        fail(f"{record_path.name}: {len(baseline_suites)} baseline suites for {len(stale)} stale entries")
    for suite in baseline_suites:
        tcs = suite.findall("testcase")
        if len(tcs) != len(stale):
            fail(f"{record_path.name}: {len(tcs)} stale testcases for {len(stale)} stale entries")
        for tc, entry in zip(tcs, stale):
            if not tc.get("name", "").startswith("stale: " + entry["case"]):
                fail(f"stale testcase {tc.get('name')!r} does not name {entry['case']!r}")
            got = [(c.tag, c.get("type")) for c in tc if c.tag in VERDICT_TAGS]
            want = [("failure" if strict else "skipped", "stale-baseline-entry")]
            if got != want:
                fail(f"stale testcase {tc.get('name')!r}: got {got}, want {want}")
            if entry["reason"] not in "".join(tc.itertext()):
                fail(f"stale testcase {tc.get('name')!r} lacks the entry's reason")

    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root.findall("testsuite"):
        tcs = suite.findall("testcase")
        counts = {
            "tests": len(tcs),
            "failures": sum(len(tc.findall("failure")) for tc in tcs),
            "errors": sum(len(tc.findall("error")) for tc in tcs),
            "skipped": sum(len(tc.findall("skipped")) for tc in tcs),
        }
        for key, value in counts.items():
            if suite.get(key) != str(value):
                fail(f"{record_path.name}: suite {suite.get('name')!r} {key}={suite.get(key)}, children say {value}")
            totals[key] += value
        if not TIME.match(suite.get("time", "")):
            fail(f"suite time {suite.get('time')!r} is not three decimals")
        props = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
        bench_suite = suite.get("name") == "dlpack-validate bench"
        for required in (("dlpack-validate.version", "command_line", "bench.calibration")
                         if bench_suite else
                         ("baseline", "baseline.sha256")
                         if suite.get("name") == "dlpack-validate baseline" else
                         ("dlpack-validate.version", "command_line", "producer.name", "consumer.name",
                          "charged.producer", "charged.consumer", "charged.neither")
                         if suite.get("name", "").startswith("pair ") else
                         ("dlpack-validate.version", "command_line", "subject.path",
                          "subject.name", "subject.dlpack_version")):
            if required not in props:
                fail(f"suite {suite.get('name')!r} lacks property {required}")
        seen = set()
        for tc in tcs:
            key = (tc.get("classname"), tc.get("name"))
            if key in seen:
                fail(f"duplicate classname+name {key}")
            seen.add(key)
            if not tc.get("classname", "").startswith("dlpack-validate."):
                fail(f"classname {tc.get('classname')!r}")
            if len(tc.get("classname").split(".")) != 3:
                fail(f"classname {tc.get('classname')!r} is not dlpack-validate.<subject>.<area>")
            if not TIME.match(tc.get("time", "")):
                fail(f"testcase time {tc.get('time')!r} is not three decimals")
            verdicts = [c for c in tc if c.tag in VERDICT_TAGS]
            if len(verdicts) > 1:
                fail(f"testcase {key} has {len(verdicts)} verdict elements")
            order = [c.tag for c in tc]
            allowed = ["properties", "failure", "error", "skipped", "system-out", "system-err"]
            if order != sorted(order, key=allowed.index):
                fail(f"testcase {key}: children out of order {order}")
            for v in verdicts:
                if not v.get("type") or v.get("message") is None:
                    fail(f"testcase {key}: <{v.tag}> without type/message")
    for key, value in totals.items():
        if root.get(key) != str(value):
            fail(f"{record_path.name}: testsuites {key}={root.get(key)}, suites say {value}")

    # Result order is preserved within each subject's suite: check each status mapping.
    by_subject = {}
    for r in run["results"]:
        by_subject.setdefault(r["subject"], []).append(r)
    suites = root.findall("testsuite")
    for idx, results in by_subject.items():
        for r, tc in zip(results, suites[idx].findall("testcase")):
            if not tc.get("name").startswith(r["id"]):
                fail(f"testcase {tc.get('name')!r} out of order (expected {r['id']})")
            want = expected_element(r["status"], strict, failing_requirement(r))
            got = [(c.tag, c.get("type")) for c in tc if c.tag in VERDICT_TAGS]
            if (got[0] if got else None) != want:
                fail(f"{r['id']} ({r['status']}): got {got}, want {want}")
            if r.get("output_tail") and tc.find("system-err") is None:
                fail(f"{r['id']}: output_tail not in <system-err>")
    print(f"ok: {record_path.name}: {len(cases)} testcases in {len(suites)} suites")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    exe, data = sys.argv[1], pathlib.Path(sys.argv[2])
    records = sorted(p for p in data.glob("*.json") if not p.name.endswith(".baseline.json"))
    if not records:
        fail(f"no records in {data}")
    for record in records:
        check(exe, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
