#!/usr/bin/env python3
"""tests/python/check_deleter_charge.py (CTest python.fake.deleter_charge): a producer case calls
the deleter of what it exported on its own thread, without the GIL. A Python producer whose
deleter touches Python without taking the GIL (fakearray's deleter_without_gil, as NumPy 1.23's
deleter of a broadcast array did) dies there, and that death is charged to DEL-06 ("the deleter
can be called from any thread without the caller holding the GIL"), not to the case's layout
and dtype requirements; the correct fake passes the same case.

One fact, one verdict: a derived requirement fails only on its own evidence. A consumer that
reads a major-0 versioned tensor and dies during the import (fakearray's
consumer_no_major_check) is charged to VER-03 alone, not to DEL-08 (a refused tensor is
released exactly once), which the crash never let the case observe; a consumer that deletes a
tensor it refused without taking it (consumer_deletes_on_refusal) fails DEL-08 by its own check.

An exception that is not one of the spec's refusals is never a clean refusal: a package whose
__dlpack__ raises MemoryError for a 3x4 array (export_memory_error; ERR-02 counts out-of-memory
among the "other failures") ends the run with errors and exit 1, and no skip calls it clean."""
import json
import os
import subprocess
import sys
import tempfile

CASE = "producer.tensor.float32.broadcast.legacy"


def run(variant, path, case=CASE):
    subprocess.run([sys.executable, "-m", "validator", f"fakearray.variants:{variant}", "--filter", case, "-q",
                    "--deterministic", "--json", path], check=False, capture_output=True)
    return json.load(open(path))["results"][0]


with tempfile.TemporaryDirectory() as tmp:
    bad = run("deleter_without_gil", os.path.join(tmp, "bad.json"))
    good = run("correct", os.path.join(tmp, "good.json"))
    major0 = run("consumer_no_major_check", os.path.join(tmp, "major0.json"), "python.consumer.version.major0")
    refused = run("consumer_deletes_on_refusal", os.path.join(tmp, "refused.json"), "python.consumer.device.foreign")
    mem_path = os.path.join(tmp, "memory.json")
    mem_rc = subprocess.run([sys.executable, "-m", "validator", "fakearray.variants:export_memory_error", "-q",
                             "--deterministic", "--json", mem_path], check=False, capture_output=True).returncode
    mem = json.load(open(mem_path))["results"]
problems = []
mem_errors = [r for r in mem if r["status"] == "error" and "MemoryError" in r["message"]]
mem_clean = [r["id"] for r in mem if r["status"] == "skip" and "MemoryError" in r["message"] and "cleanly" in r["message"]]
if mem_rc != 1 or not mem_errors or mem_clean:
    problems.append(f"export_memory_error: exit {mem_rc}, {len(mem_errors)} MemoryError errors, "
                    f"skips calling it clean: {mem_clean[:3]}")
if (major0["status"], major0["phase"], major0["requirements"]) != ("crash", "import", ["VER-03"]):
    problems.append(f"consumer_no_major_check: {major0['status']} in {major0['phase']!r} charged to "
                    f"{major0['requirements']} (expected a crash in 'import' charged to VER-03 alone)")
failed = sorted(c["requirement"] for c in refused["checks"] if c["status"] == "fail")
if refused["status"] != "fail" or failed != ["DEL-08"]:
    problems.append(f"consumer_deletes_on_refusal: {refused['status']}, failed checks {failed} (expected DEL-08)")
if (bad["status"], bad["phase"], bad["requirements"]) != ("crash", "deleter", ["DEL-06"]):
    problems.append(f"deleter_without_gil: {bad['status']} in {bad['phase']!r} charged to {bad['requirements']}")
if "(testing DEL-06)" not in bad["message"]:
    problems.append(f"the message does not say what it was testing: {bad['message']!r}")
if good["status"] != "pass":
    problems.append(f"the correct fake: {good['status']} {good['message']}")
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print(f"ok: {CASE}: deleter_without_gil -> {bad['message']}; correct -> pass; "
      f"major0 crash charged to {major0['requirements']}; a deleted refusal fails {failed}; "
      f"MemoryError: exit {mem_rc}, {len(mem_errors)} errors")
