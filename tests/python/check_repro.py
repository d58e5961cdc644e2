#!/usr/bin/env python3
"""tests/python/check_repro.py (CTest python.repro): the --repro script writer (validator.repro)
on a record that names Debian's NumPy: a producer case (broadcast, legacy: what crashed on NumPy
1.23.5), a consumer case (a reversed float32 tensor the script makes with ctypes), a pair case
numpy -> numpy (reversed float16) and a Python-protocol case (dl_device a CPU array cannot serve). Each script must import only the
standard library and numpy, state the requirement and its text, and run to the end on this
NumPy (which has neither bug), showing the struct and the elements; a case of another family
gets no script and README.md says why. Then `python -m validator --repro` end to end on the
fake array library, whose results are all expected: no script, and the run says so."""
import ast
import json
import os
import subprocess
import sys
import tempfile

from validator import repro

STDLIB = {"ctypes", "sys", "struct", "gc"}


def main():
    rec = {"subjects": [{"index": 0, "kind": "python", "name": "numpy 1.24.2", "path": "numpy"}],
           "requirements": {"DEL-06": {"level": "MUST", "summary": "The deleter can be called from any thread "
                                       "without the caller holding the GIL."},
                            "LAYOUT-01": {"level": "MUST", "summary": "Struct layouts match."},
                            "DEV-06": {"level": "MUST", "summary": "A dl_device the producer cannot serve is "
                                       "refused with BufferError."}},
           "results": [
               {"id": "producer.tensor.float32.broadcast.legacy", "subject": 0, "peer": None, "status": "crash",
                "phase": "deleter", "signal": "SIGABRT (6)", "message": "killed by SIGABRT (6) (testing DEL-06)",
                "requirements": ["DEL-06"], "params": {"dtype": "float32", "layout": "broadcast", "version": "legacy"}},
               {"id": "pair.float16.reversed.legacy", "subject": 0, "peer": 0, "status": "fail",
                "message": "values differ", "requirements": ["LAYOUT-01"],
                "params": {"dtype": "float16", "layout": "reversed", "version": "legacy"}},
               {"id": "consumer.layout.float32.reversed.legacy", "subject": 0, "peer": None, "status": "fail",
                "message": "values differ", "requirements": ["LAYOUT-01"],
                "params": {"dtype": "float32", "layout": "reversed", "version": "legacy"}},
               {"id": "python.deleter.foreign_thread", "subject": 0, "peer": None, "status": "fail", "message": "x",
                "requirements": ["DEL-06"], "params": {}},
               {"id": "python.device.dl_device_unserveable", "subject": 0, "peer": None, "status": "fail",
                "message": "[DEV-06] ...", "requirements": ["DEV-06"], "params": {}},
               {"id": "producer.tensor.int8.contiguous.versioned", "subject": 0, "peer": None, "status": "pass",
                "requirements": ["LAYOUT-01"], "params": {"dtype": "int8"}}]}
    problems = []
    with tempfile.TemporaryDirectory() as out:
        written, skipped = repro.write(rec, out)
        names = sorted(os.path.basename(p) for _, p in written)
        want = ["consumer.layout.float32.reversed.legacy__numpy_1.24.2.py",
                "pair.float16.reversed.legacy__numpy_1.24.2__numpy_1.24.2.py",
                "producer.tensor.float32.broadcast.legacy__numpy_1.24.2.py",
                "python.device.dl_device_unserveable__numpy_1.24.2.py"]
        if names != want:
            problems.append(f"scripts {names}, expected {want}")
        if [l.split(" [")[0] for l, _ in skipped] != ["python.deleter.foreign_thread"]:
            problems.append(f"not written: {skipped}")
        readme = open(os.path.join(out, "README.md")).read()
        if "python.deleter.foreign_thread" not in readme:
            problems.append("README.md does not list the result without a script")
        for _, path in written:
            text = open(path).read()
            mods = {n.name.split(".")[0] for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Import)
                    for n in node.names}
            mods |= {node.module.split(".")[0] for node in ast.walk(ast.parse(text))
                     if isinstance(node, ast.ImportFrom) and node.module}
            if mods - STDLIB != {"numpy"}:
                problems.append(f"{os.path.basename(path)} imports {sorted(mods)}")
            if "Requirement" not in text or "MUST" not in text:
                problems.append(f"{os.path.basename(path)} does not state its requirement")
            p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120)
            if "consumer" in path:
                if p.returncode != 0 or "elements as handed: True" not in p.stdout or "deleter calls: 1" not in p.stdout:
                    problems.append(f"{os.path.basename(path)}: exit {p.returncode}\n{p.stdout[-800:]}{p.stderr[-800:]}")
                continue
            if "python.device" in path:
                if p.returncode != 0 or "calling x.__dlpack__(dl_device=(7, 0))" not in p.stdout or "raised" not in p.stdout:
                    problems.append(f"{os.path.basename(path)}: exit {p.returncode}\n{p.stdout[-800:]}{p.stderr[-800:]}")
                continue
            if p.returncode != 0 or "capsule name: dltensor" not in p.stdout:
                problems.append(f"{os.path.basename(path)}: exit {p.returncode}\n{p.stdout[-800:]}{p.stderr[-800:]}")
            elif "producer" in path and "deleter returned" not in p.stdout:
                problems.append(f"{os.path.basename(path)} did not reach the deleter: {p.stdout[-400:]}")
            elif "pair" in path and "elements equal: True" not in p.stdout:
                problems.append(f"{os.path.basename(path)}: {p.stdout[-400:]}")
        d = os.path.join(out, "fake")
        p = subprocess.run([sys.executable, "-m", "validator", "fakearray.variants:correct", "--filter", "python.kw.*",
                            "-q", "--repro", d], capture_output=True, text=True)
        if p.returncode != 0 or "--repro: 0 script(s)" not in p.stderr or not os.path.exists(os.path.join(d, "README.md")):
            problems.append(f"--repro on the correct fake: exit {p.returncode}: {p.stderr[-500:]}")
    if problems:
        print("\n".join("FAIL: " + p for p in problems))
        return 1
    print(f"ok: {len(written)} scripts ran on numpy; one result without a script, listed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
