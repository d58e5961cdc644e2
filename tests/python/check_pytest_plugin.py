#!/usr/bin/env python3
"""tests/python/check_pytest_plugin.py: the pytest plugin (validator.pytest_plugin) under the
pinned pytest and pytest-xdist, on the fake array library and on NumPy.

Each check runs pytest in a fresh folder and reads its JUnit XML:
  1. the correct fake: one item per case, nothing failed, exit 0; the run record, HTML,
     Markdown and JUnit written (the options from the validator's options table, the record by
     its `report merge`); the record holds exactly the items that ran;
  2. planted bugs (tests/proofs/fakearray.tsv): the items of the cases the bug must fail or
     crash fail, and no item the correct fake passes fails otherwise;
  3. -n 2 (xdist) gives every item the outcome the plain run gave; -k and --deselect narrow
     the items; -x stops at the first failure; --lf reruns only the failed items;
  4. -m dlpack_CAP_03 selects the cases of CAP-03 only;
  5. a baseline entry makes its item xfail with the entry's reason; "strict": true on a case
     that passes makes it fail as XPASS(strict), and makes `python -m validator` exit 1;
  6. the ini key (dlpack_validate in pyproject.toml) collects as the option does;
  7. NumPy (the interpreter's own): the items' outcomes are the statuses `python -m validator`
     gives the same cases.
Exit 0 when every check holds; 77 when the pinned pytest cannot be installed (no index).
"""
import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PINNED = ["pytest==8.4.2", "pytest-xdist==3.8.0"]
FAILED = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILED.append(what)


def pytest_site(python):
    """The site-packages of the pinned pytest's venv (made once by scripts/venvs.py, the
    project's one venv helper, through its command line)."""
    reqs = [a for r in PINNED for a in ("--req", r)]
    made = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "venvs.py"), "python", "pytest-plugin", *reqs,
                           "--base", python, "-q"], capture_output=True, text=True)
    if made.returncode != 0:  # 75: not installable here (no index, no cache)
        print(f"skip: the pinned pytest could not be installed ({(made.stderr or made.stdout).strip()[-300:]})")
        sys.exit(77)
    return subprocess.run([made.stdout.strip().splitlines()[-1], "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


class Runner:
    def __init__(self, args, site):
        self.python = args.python
        self.work = args.work
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join([site, os.path.abspath(args.package), os.path.abspath(args.stage)])
        self.n = 0

    def pytest(self, *argv, files=None):
        """Run pytest in a fresh folder; returns (exit code, {item name: outcome}, output, folder)."""
        self.n += 1
        d = os.path.join(self.work, f"run{self.n}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, text in (files or {}).items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        return self.again(d, *argv)

    def again(self, d, *argv):
        junit = os.path.join(d, "junit.xml")
        cmd = [self.python, "-m", "pytest", "-p", "validator.pytest_plugin", "-q", "--junitxml", junit] + list(argv)
        done = subprocess.run(cmd, cwd=d, env=self.env, capture_output=True, text=True, timeout=900)
        out = done.stdout + done.stderr
        outcomes = {}
        if not os.path.exists(junit):
            print(f"pytest {' '.join(argv)} wrote no JUnit (exit {done.returncode}):\n{out[-1500:]}", flush=True)
        else:
            for tc in ET.parse(junit).getroot().iter("testcase"):
                kind = "passed"
                for child in tc:
                    if child.tag in ("failure", "error"):
                        kind = "failed"
                    elif child.tag == "skipped":
                        kind = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
                outcomes[tc.get("name")] = kind
        return done.returncode, outcomes, out, d


def proofs(variant):
    out = []
    with open(os.path.join(ROOT, "tests", "proofs", "fakearray.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            v, glob, status = line.rstrip("\n").split("\t")[:3]
            if v == variant:
                out.append((glob, status))
    return out


def skip_places(junit):
    """Where each skip of a JUnit file is located (pytest's FILE:LINE before the reason), and
    which of those name a case's Declare in this repository (the call's last line, as GCC's
    __builtin_LINE() gives it: "Declare(" on it or one of the three lines before)."""
    places = []
    for tc in ET.parse(junit).getroot().iter("testcase"):
        for child in tc:
            if child.tag == "skipped" and child.get("type") != "pytest.xfail":
                places.append((child.text or "").split(": ", 1)[0])
    real = []
    for p in places:
        m = re.fullmatch(r"(cases/[\w/]+\.cpp):(\d+)", p)
        if m and os.path.isfile(os.path.join(ROOT, m[1])) and int(m[2]) > 1:
            lines = open(os.path.join(ROOT, m[1])).read().splitlines()
            if int(m[2]) <= len(lines) and any("Declare(" in x for x in lines[max(0, int(m[2]) - 4):int(m[2])]):
                real.append(p)
    return places, real


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", required=True, help="the interpreter the validator's module was built for")
    ap.add_argument("--package", required=True, help="the folder holding the validator package (build/python)")
    ap.add_argument("--stage", required=True, help="the folder holding the fake array library")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    run = Runner(args, pytest_site(args.python))
    fake = "fakearray.variants:correct"
    py = ["--dlpack-validate-filter", "python.*"]

    # 1. the correct fake, with the reports
    rc, ref, out, d = run.pytest("--dlpack-validate", fake, *py, "--dlpack-validate-json", "rec.json",
                                 "--dlpack-validate-html", "rep.html", "--dlpack-validate-summary-md", "sum.md",
                                 "--dlpack-validate-junit", "val.xml")
    check(rc == 0 and ref and all(v in ("passed", "skipped") for v in ref.values()),
          f"correct fake: {len(ref)} items, none failed, exit {rc}" + ("" if rc == 0 else "\n" + out[-2000:]))
    check(all(n.endswith(f"[{fake}]") for n in ref), "items are named CASE_ID[SUBJECT]")
    rec = json.load(open(os.path.join(d, "rec.json"))) if os.path.exists(os.path.join(d, "rec.json")) else {}
    ran = {f"{r['id']}[{fake}]" for r in rec.get("results", [])}
    check(ran == set(ref), f"the record holds exactly the items that ran ({len(ran)} results, {len(ref)} items)")
    check(os.path.exists(os.path.join(d, "rep.html")) and os.path.exists(os.path.join(d, "sum.md")),
          "HTML and Markdown written")
    try:
        cases = ET.parse(os.path.join(d, "val.xml")).getroot().iter("testcase")
        check(sum(1 for _ in cases) == len(ran), "the validator's JUnit XML holds one testcase per result")
    except (OSError, ET.ParseError) as e:
        check(False, f"the validator's JUnit XML: {e}")
    check(rec.get("command_line", [None])[0] == "pytest" and "invocation" in rec,
          "the merged record names the pytest session and keeps the program that re-runs a case")
    # JUnit's time of an item is its case's own, not its batch's (the first item of a batch used
    # to carry the whole batch)
    try:
        times = {tc.get("name"): float(tc.get("time") or 0)
                 for tc in ET.parse(os.path.join(d, "junit.xml")).getroot().iter("testcase")}
        own = {f"{r['id']}[{fake}]": float(r.get("duration_s") or 0) for r in rec.get("results", [])}
        worst = max(times, key=lambda n: times[n] - own.get(n, 0.0)) if times else None
        check(times and all(abs(times[n] - own.get(n, 0.0)) < 0.05 for n in times),
              f"JUnit times are the cases' own (largest gap: {worst} {times.get(worst)} s vs "
              f"{own.get(worst)} s)")
    except (OSError, ET.ParseError, ValueError) as e:
        check(False, f"pytest's JUnit XML: {e}")
    # The option's name before the options table named it still works.
    rc, _, out, d = run.pytest("--dlpack-validate", fake, "--dlpack-validate-filter", "python.capsule.*",
                               "--dlpack-validate-md", "old.md")
    check(rc == 0 and os.path.exists(os.path.join(d, "old.md")), "--dlpack-validate-md still writes the Markdown summary")

    # 2. planted bugs fail the right items
    for variant in ("no_destructor", "deleter_without_gil", "buffer_not_kept"):
        rc, got, out, _ = run.pytest("--dlpack-validate", f"fakearray.variants:{variant}", *py)
        bad = []
        for name, outcome in got.items():
            case = name.split("[", 1)[0]
            want = next((s for g, s in proofs(variant) if fnmatch.fnmatchcase(case, g)), None)
            if want in ("fail", "crash", "timeout", "error"):
                if outcome != "failed":
                    bad.append(f"{case}: {outcome}, the bug must make it {want}")
            elif want is None and outcome == "failed" and ref.get(f"{case}[{fake}]") == "passed":
                bad.append(f"{case}: failed, passes on the correct fake and no proof names it")
        must = [g for g, s in proofs(variant) if s in ("fail", "crash")]
        check(rc == 1 and got and must and not bad, f"{variant}: the items of {must} fail, nothing else newly fails"
              + ("" if not bad else ": " + "; ".join(bad[:5])))

    # 3. xdist, -k, --deselect, -x, --lf
    variant = "fakearray.variants:deleter_without_gil"
    rc1, whole, _, _ = run.pytest("--dlpack-validate", variant, *py)
    rc2, xdist, out, _ = run.pytest("--dlpack-validate", variant, *py, "-n", "2")
    check(whole and whole == xdist and rc1 == rc2 == 1,
          f"-n 2 gives each of the {len(whole)} items its plain outcome"
          + ("" if whole == xdist else f": differ {sorted(set(whole.items()) ^ set(xdist.items()))[:4]}\n{out[-1500:]}"))
    rc1, plain, _, _ = run.pytest("--dlpack-validate", variant, *py, "-k", "foreign or capsule")
    check(all("foreign" in n or "capsule" in n for n in plain) and len(plain) < len(ref), "-k narrows the items")
    rc, _, out, _ = run.pytest("--dlpack-validate", variant, *py, "-k", "foreign or capsule", "-v")  # -q -v: the header
    m = re.search(r"collected (\d+) items? / (\d+) deselected / (\d+) selected", out)
    check(m and int(m.group(3)) == len(plain) and int(m.group(1)) == int(m.group(2)) + int(m.group(3)),
          f"pytest's header counts the cases: {m.group(0) if m else out[:400]}")
    first = sorted(n for n, o in plain.items() if o == "failed")[0]
    rc, got, _, _ = run.pytest("--dlpack-validate", variant, *py, "-k", "foreign or capsule",
                               "--deselect", f"dlpack-validate::{first}")
    check(first not in got and len(got) == len(plain) - 1, f"--deselect dlpack-validate::{first} drops that item")
    rc, got, out, d = run.pytest("--dlpack-validate", variant, *py, "-x")
    check(rc == 1 and sum(1 for o in got.values() if o == "failed") == 1 and "stopping after 1 failures" in out,
          "-x stops at the first failure")
    rc, first_run, _, d = run.pytest("--dlpack-validate", variant, *py)
    rc, got, out, _ = run.again(d, "--dlpack-validate", variant, *py, "--lf")
    failed = {n for n, o in first_run.items() if o == "failed"}
    check(failed and set(got) == failed, f"--lf reruns the {len(failed)} failed items only (ran {len(got)})")

    # 4. a marker per requirement
    rc, got, _, _ = run.pytest("--dlpack-validate", fake, *py, "-m", "dlpack_CAP_03")
    listed = json.loads(subprocess.run([args.python, "-m", "validator", fake, "--list", "--json", "-",
                                        "--filter", "python.*"], env=run.env, capture_output=True,
                                       text=True).stdout or "[]")
    cap03 = {f"{c['id']}[{fake}]" for c in listed if "CAP-03" in c.get("requirements", [])}
    check(got and set(got) == cap03, f"-m dlpack_CAP_03 selects the {len(cap03)} cases of CAP-03")

    # 5. baselines: xfail with the reason; strict entries
    failing = sorted(n for n, o in first_run.items() if o == "failed")[0].split("[", 1)[0]
    passing = sorted(n for n, o in first_run.items() if o == "passed")[0].split("[", 1)[0]
    baseline = {"schema": "dlpack-validate/baseline", "schema_version": 1, "entries": [
        {"case": failing, "expect": "unexpected", "reason": "planted: the deleter runs without the GIL"},
        {"case": passing, "expect": "fail", "reason": "fixed long ago", "strict": True}]}
    rc, got, out, _ = run.pytest("--dlpack-validate", variant, *py, "--dlpack-validate-baseline", "base.json", "-rxX",
                                 files={"base.json": json.dumps(baseline)})
    check(got.get(f"{failing}[{variant}]") == "xfailed" and "planted: the deleter runs without the GIL" in out,
          f"a baseline entry makes {failing} xfail with its reason")
    check(got.get(f"{passing}[{variant}]") == "failed" and "XPASS(strict)" in out,
          f"a strict entry on {passing}, which passes, fails it as XPASS(strict)")

    # 5b. the same entries on the command line: a strict entry's xpass fails the run
    for strict, want_rc in ((True, 1), (False, 0), ("yes", 2)):
        entry = {"case": passing, "expect": "fail", "reason": "fixed long ago", "strict": strict}
        path = os.path.join(args.work, "strict.json")
        with open(path, "w") as f:
            json.dump({"schema": "dlpack-validate/baseline", "schema_version": 1, "entries": [entry]}, f)
        done = subprocess.run([args.python, "-m", "validator", variant, "--filter", passing, "--baseline", path, "-q"],
                              env=run.env, capture_output=True, text=True, cwd=args.work)
        check(done.returncode == want_rc, f'python -m validator with "strict": {json.dumps(strict)} on a passing case: '
              f"exit {done.returncode} (want {want_rc}) {done.stderr.strip()[-200:]}")

    # 6. the ini key
    rc, got, out, _ = run.pytest(*py, files={"pyproject.toml": f'[tool.pytest.ini_options]\ndlpack_validate = ["{fake}"]\n'})
    check(set(got) == set(ref), f"dlpack_validate in pyproject.toml collects the same {len(ref)} items ({len(got)})")

    # 7. NumPy: the items say what the validator says
    rc, got, out, d = run.pytest("--dlpack-validate", "numpy", "-k", "copy", "--dlpack-validate-json", "rec.json")
    # A skip is reported where its case is declared (cases/...cpp:LINE, the line of its Declare),
    # not at a made-up place (it once read <cwd>/dlpack-validate:1:).
    places, real = skip_places(os.path.join(d, "junit.xml"))
    check(places and len(real) == len(places),
          f"each of the {len(places)} skips is located at its case's Declare line ({len(real)} are; e.g. {places[:1]})")
    rec = json.load(open(os.path.join(d, "rec.json"))) if os.path.exists(os.path.join(d, "rec.json")) else {}
    want = {"pass": "passed", "xpass": "passed", "warn": "passed", "skip": "skipped", "fail": "failed",
            "crash": "failed", "timeout": "failed", "error": "failed"}
    direct = subprocess.run([args.python, "-m", "validator", "numpy", "--json", "-", "-q"] +
                            [a for c in sorted({n.split("[", 1)[0] for n in got}) for a in ("--filter", c)],
                            env=run.env, capture_output=True, text=True)
    try:
        statuses = {f"{r['id']}[numpy]": r["status"] for r in json.loads(direct.stdout)["results"]}
    except ValueError:
        statuses = {}
    differ = [n for n, o in got.items() if want.get(statuses.get(n)) != o]
    check(got and statuses and not differ and len(rec.get("results", [])) == len(got),
          f"numpy -k copy: {len(got)} items, each as `python -m validator numpy` says"
          + ("" if not differ else f": {differ[:4]}"))

    print(f"{len(FAILED)} of the checks failed" if FAILED else "every check holds")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
