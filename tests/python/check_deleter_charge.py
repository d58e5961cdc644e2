#!/usr/bin/env python3
"""tests/python/check_deleter_charge.py (CTest python.fake.deleter_charge): a producer case calls
the deleter of what it exported on its own thread, without the GIL. A Python producer whose
deleter touches Python without taking the GIL (fakearray's deleter_without_gil, as NumPy 1.23's
deleter of a broadcast array did) dies there, and that death is charged to DEL-06 ("the deleter
can be called from any thread without the caller holding the GIL"), not to the case's layout
and dtype requirements; the correct fake passes the same case."""
import json
import os
import subprocess
import sys
import tempfile

CASE = "producer.tensor.float32.broadcast.legacy"


def run(variant, path):
    subprocess.run([sys.executable, "-m", "validator", f"fakearray.variants:{variant}", "--filter", CASE, "-q",
                    "--deterministic", "--json", path], check=False, capture_output=True)
    return json.load(open(path))["results"][0]


with tempfile.TemporaryDirectory() as tmp:
    bad = run("deleter_without_gil", os.path.join(tmp, "bad.json"))
    good = run("correct", os.path.join(tmp, "good.json"))
problems = []
if (bad["status"], bad["phase"], bad["requirements"]) != ("crash", "deleter", ["DEL-06"]):
    problems.append(f"deleter_without_gil: {bad['status']} in {bad['phase']!r} charged to {bad['requirements']}")
if "(testing DEL-06)" not in bad["message"]:
    problems.append(f"the message does not say what it was testing: {bad['message']!r}")
if good["status"] != "pass":
    problems.append(f"the correct fake: {good['status']} {good['message']}")
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print(f"ok: {CASE}: deleter_without_gil -> {bad['message']}; correct -> pass")
