#!/usr/bin/env python3
"""tests/python/corpus/check_corpus.py: the edge-case corpus (validator.corpus, docs/corpus.md)
used as a library's test suite uses it: pytest, the plugin's dlpack_edge_case/dlpack_bad_case
fixtures or corpus.params, the library's own from_dlpack.

  1. the fake array library, correct: its test file passes; every case either passes or skips
     with a reason, and the legal cases a consumer must take all pass; so do two lawful
     variants (a consumer that takes ownership and then refuses, deleting once; one whose arrays
     cannot be exported back, so values are not read);
  2. planted bugs (fakearray bug names, or the bug zoo's DLPV_ZOO_BUG): each fails the cases it
     must, naming the rule, and fails no case outside them;
  3. with --peers-python: NumPy's and PyTorch's test files (tests/python/corpus/test_*_corpus.py,
     with the findings they xfail) pass under the pinned peers; their outcome counts are printed.
Exit 0 when every check holds; 77 when the pinned pytest cannot be installed (no index).
"""
import argparse
import collections
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from check_pytest_plugin import pytest_site  # noqa: E402  (the pinned pytest's venv, made once)

FAILED = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILED.append(what)


def run(python, test, work, name, env_extra, pythonpath):
    """pytest on one test file; returns (exit code, {case id: (outcome, message)}, output)."""
    os.makedirs(work, exist_ok=True)
    xml = os.path.join(work, name + ".xml")
    env = {k: v for k, v in os.environ.items() if k not in ("DLPV_ZOO_BUG", "FAKE_BUGS")}
    env.update(env_extra, PYTHONPATH=os.pathsep.join(pythonpath))
    argv = [python, "-m", "pytest", "-p", "validator.pytest_plugin", "-q", "-rs", "-p", "no:cacheprovider",
            f"--junitxml={xml}", "-W", "default", os.path.join(HERE, test)]
    p = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    out = {}
    if os.path.exists(xml):
        for tc in ET.parse(xml).getroot().iter("testcase"):
            cid = tc.get("name").split("[", 1)[-1].rstrip("]")
            kind = "passed"
            msg = ""
            for child in tc:
                if child.tag in ("failure", "error", "skipped"):
                    kind = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                    msg = child.get("message") or ""
                    if child.tag == "skipped" and child.get("type") == "pytest.xfail":
                        kind = "xfailed"
            out[(tc.get("name").split("[", 1)[0], cid)] = (kind, msg)
    return p.returncode, out, p.stdout + p.stderr


def counts(results):
    return dict(collections.Counter(k for k, _ in results.values()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True)
    ap.add_argument("--package", required=True, help="the staged package folder (build/python)")
    ap.add_argument("--stage", required=True, help="where the fake array library is staged")
    ap.add_argument("--work", required=True)
    ap.add_argument("--peers-python", default="")
    a = ap.parse_args()
    site = pytest_site(a.python)
    path = [site, os.path.abspath(a.package), os.path.abspath(a.stage)]

    sys.path[:0] = [os.path.abspath(a.package)]
    from validator import corpus
    must = {c.id for c in corpus.cases(legal=True) if c.accept == "must"}

    # 1. correct
    rc, res, text = run(a.python, "test_fakearray_corpus.py", a.work, "correct", {}, path)
    c = counts(res)
    check(rc == 0 and "failed" not in c and "error" not in c, f"fakearray (correct): exit {rc}, outcomes {c}")
    if rc != 0:
        print(text[-3000:])
    legal_pass = {cid for (fn, cid), (k, _) in res.items() if fn == "test_from_dlpack" and k == "passed"}
    check(must <= legal_pass, f"every legal case a consumer must take passes ({len(must & legal_pass)}/{len(must)}); "
          f"missing: {sorted(must - legal_pass)[:5]}")
    skipped = [m for (k, m) in res.values() if k == "skipped"]
    check(all("corpus case" in m for m in skipped), f"each of the {len(skipped)} skips says which case and why")

    # lawful consumers: unusual behaviour the spec allows passes
    for lawful in ("lawful_rename_refuse_delete", "lawful_consumer_only"):
        rc, res, text = run(a.python, "test_fakearray_corpus.py", a.work, lawful, {"FAKE_BUGS": lawful}, path)
        c = counts(res)
        check(rc == 0 and "failed" not in c and "error" not in c, f"fakearray, lawful '{lawful}': exit {rc}, outcomes {c}")
        if rc != 0:
            print(text[-3000:])

    # 2. planted bugs: (name, environment, cases that must fail (prefixes), rule named, cases allowed to fail)
    planted = [
        ("byte_offset ignored", {"DLPV_ZOO_BUG": "consumer layout offset elements"},
         ["test_from_dlpack:byte_offset.ndim1.", "test_from_dlpack:byte_offset.ndim2."], "LAYOUT-08",
         ["test_from_dlpack:byte_offset.", "test_from_dlpack:unaligned.int16_offset"]),
        ("deleter never called", {"DLPV_ZOO_BUG": "consumer any any deleter_leak"},
         ["test_from_dlpack:scalar.plain.", "test_from_dlpack:dtype.float32."], "DEL-02",
         ["test_from_dlpack:"]),
        ("deleter called twice", {"DLPV_ZOO_BUG": "consumer any any deleter_double"},
         ["test_from_dlpack:zero_size.null_data.compact.", "test_from_dlpack:strides.negative."], "DEL-02",
         ["test_from_dlpack:"]),
        ("bool read wrong", {"DLPV_ZOO_BUG": "consumer dtype bool elements"},
         ["test_from_dlpack:dtype.bool."], "DTYPE-08", ["test_from_dlpack:dtype.bool."]),
        ("deleter of a wrongly named capsule called", {"FAKE_BUGS": "consumer_takes_any_capsule"},
         ["test_from_dlpack_refuses:capsule.wrong_name.", "test_from_dlpack_refuses:capsule.used."], "CAP-06",
         ["test_from_dlpack_refuses:capsule."]),
    ]
    for name, env, want, rule, allowed in planted:
        rc, res, text = run(a.python, "test_fakearray_corpus.py", a.work, name.replace(" ", "_"), env, path)
        failed = {f"{fn}:{cid}": m for (fn, cid), (k, m) in res.items() if k in ("failed", "error")}
        hit = all(any(f.startswith(w) for f in failed) for w in want)
        named = all(rule in failed[f] for f in failed if any(f.startswith(w) for w in want))
        stray = sorted(f for f in failed if not any(f.startswith(p) for p in allowed))
        check(rc != 0 and hit and named and not stray,
              f"planted '{name}' ({env}): {len(failed)} failed, the wanted ones among them: {hit}, naming {rule}: "
              f"{named}; failed outside its reach: {stray[:4]}")
        if not (hit and named):
            print(text[-2500:])

    # 3. the pinned peers, as their own suites would run it
    if a.peers_python:
        for lib in ("numpy", "torch"):
            rc, res, text = run(a.peers_python, f"test_{lib}_corpus.py", a.work, lib, {}, path)
            check(rc == 0, f"{lib} (pinned peers): exit {rc}, outcomes {counts(res)}")
            for (fn, cid), (k, m) in sorted(res.items()):
                if k in ("failed", "error", "xfailed"):
                    print(f"     {k:8} {fn}[{cid}]: {m[:300]}")
            if rc != 0:
                print(text[-3000:])
    if FAILED:
        print(f"{len(FAILED)} check(s) failed")
        return 1
    print("all corpus checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
