#!/usr/bin/env python3
"""tests/python/check_cli.py: the command line of `python -m validator`: bad input is one
line on stderr and exit 2 (nothing on stdout, no report written); --list and --version exit
0; the isolation modes give the same verdicts; the JSON record names a Python subject."""
import argparse
import json
import os
import shutil
import subprocess
import sys

RUN = [sys.executable, "-m", "validator"]
OK = "fakearray.variants:correct"


def run(args):
    return subprocess.run(RUN + args, capture_output=True, text=True, errors="replace")


def check_rerun(workdir):
    """The "run one case again" command, typed as printed in the repository checkout (whose own
    validator/ folder, the C++ CLI's sources, is not the package) with no PYTHONPATH of the
    shell's, runs that one case; the HTML report prints the same command."""
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    html = os.path.join(workdir, "rerun.html")
    p = subprocess.run(RUN + ["fakearray.variants:no_destructor", "--filter", "python.capsule.*", "--html", html],
                       capture_output=True, text=True, errors="replace", cwd=checkout)
    step = next((l for l in p.stdout.splitlines() if "run one case again" in l), "")
    again = step.split(": ", 1)[1] if ": " in step else ""
    if p.returncode != 1 or not again:
        return [f"rerun: exit {p.returncode}, no re-run command in {p.stdout[-400:]!r}"]
    problems = []
    import html as _html
    if _html.escape(again, quote=False) not in open(html, encoding="utf-8").read():
        problems.append(f"rerun: the HTML report does not print {again!r}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    q = subprocess.run(["sh", "-c", again + " --json -"], capture_output=True, text=True, errors="replace",
                       cwd=checkout, env=env)
    try:
        ids = [r["id"] for r in json.loads(q.stdout)["results"]]
    except ValueError:
        return problems + [f"rerun: {again!r} from {checkout}: exit {q.returncode}, {q.stderr[-400:]!r}"]
    if q.returncode != 1 or ids != [again.rsplit(" ", 1)[1]]:
        problems.append(f"rerun: {again!r} ran {ids} (exit {q.returncode})")
    return problems


def check_no_device(workdir):
    """A package that can make no array here (CuPy without a GPU: its adapter declares no
    device) was never probed: its DLPack versions are "not probed", never "legacy-only"."""
    with open(os.path.join(workdir, "nodevice_adapter.py"), "w") as f:
        f.write("from fakearray import Adapter\n\n\nclass NoDevice(Adapter):\n"
                "    unavailable = 'no CUDA device (a stand-in for CuPy without a GPU)'\n\n"
                "    def devices(self):\n        return []\n")
    env = dict(os.environ, PYTHONPATH=workdir + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = os.path.join(workdir, "nodevice.json")
    p = subprocess.run(RUN + ["nodevice_adapter:NoDevice", "--filter", "python.capsule.*", "--json", out],
                       capture_output=True, text=True, errors="replace", env=env)
    if p.returncode != 0:
        return [f"no device: exit {p.returncode}: {p.stderr[-400:]!r}"]
    s = json.load(open(out))["subjects"][0]
    problems = []
    if s["legacy_only"] or s["dlpack_version"] != "not probed":
        problems.append(f"no device: the subject reads legacy_only={s['legacy_only']}, DLPack {s['dlpack_version']!r}")
    if "legacy-only" in p.stdout or "versions not probed" not in p.stdout:
        problems.append(f"no device: the summary calls it legacy-only or does not say it was not probed: {p.stdout[:600]!r}")
    return problems


def check_records(workdir):
    """`report merge` and `diff` over saved records, as the C++ CLI has them: two shards merge
    into the unsharded run's results, a diff of a record with itself finds no regression, and
    bad input is exit 2."""
    problems = []
    paths = [os.path.join(workdir, f"shard{k}.json") for k in (1, 2)]
    for k, path in enumerate(paths, 1):
        run(["-q", "--filter", "python.capsule.*", "--shard", f"{k}/2", "--json", path, OK])
    merged = os.path.join(workdir, "merged.json")
    p = run(["report", "merge", *paths, "-o", merged, "-q"])
    whole = run(["-q", "--filter", "python.capsule.*", "--json", os.path.join(workdir, "whole.json"), OK])
    try:
        got = sorted((r["id"], r["status"]) for r in json.load(open(merged))["results"])
        want = sorted((r["id"], r["status"]) for r in json.load(open(os.path.join(workdir, "whole.json")))["results"])
        if p.returncode != whole.returncode or got != want:
            problems.append(f"report merge: exit {p.returncode} (whole run {whole.returncode}), "
                            f"{len(got)} results, {len(want)} in the whole run")
    except (OSError, ValueError, KeyError) as e:
        problems.append(f"report merge: no merged record ({e}): {p.stderr[-300:]}")
    p = run(["diff", merged, merged])
    if p.returncode != 0 or "no regression" not in p.stdout:
        problems.append(f"diff of a record with itself: exit {p.returncode}: {p.stdout[-300:]}")
    for bad in (["diff", merged], ["report", "merge", paths[0], "-o", merged, "--json", merged]):
        p = run(bad)
        if p.returncode != 2 or p.stdout or len(p.stderr.strip().splitlines()) != 1:
            problems.append(f"{' '.join(bad[:2])}: bad input gave exit {p.returncode}: {p.stderr!r}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    problems = []
    bad = [
        ("unknown package", ["no_such_package_xyz"], "no python package"),
        ("module without the attribute", ["fakearray.variants:no_such_variant"], "no_such_variant"),
        ("malformed MODULE:ATTR", ["fakearray:"], "module:attr"),
        ("unknown option", ["--frobnicate", OK], "frobnicate"),
        ("bad isolate value", ["--isolate", "thread", OK], "isolate"),
        ("negative timeout", ["--timeout", "-1", OK], "timeout"),
        ("negative load timeout", ["--load-timeout", "-1", OK], "load-timeout"),
        ("filter matches nothing", ["--filter", "no.such.case*", OK], "no case matches"),
        ("filter near miss", ["--filter", "python_capsule", OK], "did you mean --filter 'python.capsule"),
        ("malformed -k", ["-k", "capsule and", OK], "-k 'capsule and'"),
        ("malformed glob", ["--filter", "python.[", OK], "malformed glob 'python.[': unclosed ["),
        ("-k matches nothing", ["-k", "no_such_word_xyz", OK], "no case matches"),
        ("unwritable report path", ["--json", os.path.join(a.workdir, "nodir", "x.json"), OK], "cannot write"),
        ("no subject", [], "no subject"),
        ("a C plugin's path", ["./libdlpv_reference.so"], "dlpack-validate ./libdlpv_reference.so"),
        ("adapter flag, unknown module", ["--adapter", "no_such_module_xyz:Adapter"], "no python package"),
    ]
    for name, args, needle in bad:
        p = run(args)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2:
            problems.append(f"{name}: exit {p.returncode}, expected 2 ({p.stderr[-400:]!r})")
        elif len(lines) != 1:
            problems.append(f"{name}: {len(lines)} stderr lines, expected 1: {p.stderr[-400:]!r}")
        elif needle.lower() not in lines[0].lower():
            problems.append(f"{name}: {lines[0]!r} does not mention {needle!r}")
        if p.stdout.strip():
            problems.append(f"{name}: printed to stdout: {p.stdout[:200]!r}")
    p = run(["--list"])
    if p.returncode != 0 or "python.capsule.name.versioned" not in p.stdout or "producer.tensor." not in p.stdout:
        problems.append(f"--list: exit {p.returncode}, Python-protocol and C-level cases expected")
    p = run(["--version"])
    if p.returncode != 0 or "dlpack-validate" not in p.stdout:
        problems.append(f"--version: exit {p.returncode} {p.stdout!r}")
    verdicts = {}
    for mode in ("worker", "case", "none"):
        out = os.path.join(a.workdir, f"isolate_{mode}.json")
        p = run(["--isolate", mode, "--filter", "python.capsule.*", "--json", out, "--deterministic", OK])
        if p.returncode != 0:
            problems.append(f"--isolate {mode}: exit {p.returncode}: {p.stdout[-400:]} {p.stderr[-400:]}")
            continue
        rec = json.load(open(out))
        verdicts[mode] = {r["id"]: r["status"] for r in rec["results"]}
        s = rec["subjects"][0]
        if s["kind"] != "python" or not s["name"].startswith("fakearray"):
            problems.append(f"--isolate {mode}: subject {s['kind']} {s['name']!r}")
    if len({json.dumps(v, sort_keys=True) for v in verdicts.values()}) > 1:
        problems.append(f"isolation modes disagree: {verdicts}")
    p = run(["-q", "--filter", "python.capsule.*", OK])
    if p.returncode != 0 or len(p.stdout.strip().splitlines()) != 1:
        problems.append(f"-q: exit {p.returncode}, output {p.stdout!r}")
    # Selection and flow, as in the C CLI: --exclude, --requirement, -x, --json - (record on
    # stdout, summary on stderr).
    p = run(["--filter", "python.kw.*", "--exclude", "*copy*", "--requirement", "KW-*", "-x", "--json", "-", OK])
    try:
        rec = json.loads(p.stdout)
        ids = [r["id"] for r in rec["results"]]
        if not ids or any("copy" in i or not i.startswith("python.kw.") for i in ids):
            problems.append(f"--exclude/--filter: {ids}")
        if rec["options"].get("exclude") != ["*copy*"] or not rec["options"].get("exitfirst"):
            problems.append(f"record options: {rec['options']}")
    except ValueError:
        problems.append(f"--json -: stdout is not the record: {p.stdout[:200]!r}")
    if "verdict:" not in p.stderr:
        problems.append("--json -: the summary is not on stderr")
    p = run(["--timeout", "abc", OK])
    if p.returncode != 2 or "abc" not in p.stderr:
        problems.append(f"--timeout abc: exit {p.returncode} {p.stderr!r}")
    problems += check_rerun(a.workdir)
    problems += check_no_device(a.workdir)
    problems += check_records(a.workdir)
    for x in problems:
        print("PROBLEM:", x)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
