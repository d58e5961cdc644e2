#!/usr/bin/env python3
"""atlas/sweep.py: the release sweep. Runs `python -m validator` on every (library, release) of a
declared list (atlas/releases.tsv), each release in a cached venv of its own, and merges the
records into one (`dlpack-validate report merge`).

  atlas/sweep.py plan [--releases F] [--only LIB,...] [--shard K/N]
      the (library, release) lines this shard would sweep, one per line
  atlas/sweep.py run --out DIR [--releases F] [--only LIB,...] [--shard K/N]
                     [--partners LIB,... --partner-python PY]
                     [--budget-gib G] [--parallel N] [--validator-path DIR] [--cli PATH] [-- VALIDATOR ARGS...]
      sweep: DIR/<library>-<release>.json per line, DIR/sweep.json (the lines' records merged)
      and DIR/sweep-manifest.json (per line: installed or why not, seconds, venv size); with
      --repro, python -m validator --repro's scripts in DIR/repro/<library>-<release>/

Each release's venv is $DLPV_CACHE/atlas/<library>-<release>-<hash of its requirements and the
interpreter>, made from $DLPV_PYTHON (default /usr/bin/python3, the interpreter the validator's
module is built for) with binary wheels only (`--only-binary :all:`), pip's cache in
$DLPV_CACHE/pip. A lock serialises the making of venvs, and a venv counts as made only once its
stamp is written, so two sweeps on one cache never use a half-made venv. Venvs are made one at a
time; releases run side by side (--parallel N, default the cores: while one release runs the
next one's venv is made), each run with its share of the cores (-j) unless the arguments after
-- choose one. Before each venv is made, the least recently used venvs of other releases not in
use are deleted until the atlas folder fits in the disk budget (--budget-gib, default 20), which
is printed; a new venv waits while the venvs in use already fill the budget. A line whose
requirements cannot be installed (no wheel for this interpreter, a resolver conflict) is
recorded in the manifest with pip's last line and is not a failure of the sweep.

Pairs: with --partners, each release also runs the pair cases (pair.*, and python.pair.*: the
cross-device ones, where the two live on different devices) against one fixed
release of each partner library: the ones installed in the interpreter --partner-python names
(the pinned peers' venv, scripts/peers.sh). The release's own packages come first on the path
and the partners' after them (a throwaway venv whose .pth adds the two site folders in that
order), so the release's NumPy is the one imported. Only the results with the release on one
side are kept; a partner that cannot be imported beside the release is a load error in the log
and its pairs are not run.

A SYCL release (dpnp) carries `env:oneapi` among its requirements: not a package, but the word
that its runs need Intel's OpenCL CPU runtime from its own venv (the venv's lib/ on
LD_LIBRARY_PATH, its libintelocl.so in OCL_ICD_FILENAMES, ONEAPI_DEVICE_SELECTOR=opencl:cpu), as
bin/python-oneapi sets for the pinned oneAPI peer (scripts/oneapi.sh).

--shard K/N splits the list (the i-th selected line, from 0, goes to part i mod N + 1), so a CI
job matrix sweeps in parallel and one job merges the parts' sweep.json files with
`dlpack-validate report merge` (docs/atlas.md). The exit code is 0 when every installable line
was run, whatever the verdicts (the sweep is a survey, not a gate), 2 on bad input, 1 when the
validator itself failed on a line (exit 2 or 3).
"""
import argparse
import concurrent.futures
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bad(message):
    sys.stderr.write(f"atlas: error: {message}\n")
    sys.exit(2)


ENV_WORDS = {"env:oneapi"}  # requirement columns that are not packages (see the docstring)


def pip_requirements(line):
    return [r for r in line["requirements"] if r not in ENV_WORDS]


def run_env(line, venv, env):
    """`env` with what the line's env: words ask for (env:oneapi: the SYCL runtime of the venv)."""
    if "env:oneapi" not in line["requirements"]:
        return env
    lib = os.path.join(venv, "lib")
    icd = sorted(n for n in os.listdir(lib) if n.startswith("libintelocl.so") and not n.endswith("-gdb.py"))
    out = dict(env, LD_LIBRARY_PATH=lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""))
    out.setdefault("ONEAPI_DEVICE_SELECTOR", "opencl:cpu")
    if icd:
        out.setdefault("OCL_ICD_FILENAMES", os.path.join(lib, icd[0]))
    return out


def read_releases(path, only):
    lines = []
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        bad(f"cannot read {path}: {e.strerror}")
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 3 or not all(c.strip() for c in cols):
            bad(f"{path}:{n}: expected SUBJECT<TAB>RELEASE<TAB>REQUIREMENT[<TAB>...], got {line!r}")
        for req in cols[2:]:
            if "==" not in req and not req.startswith("script:") and req not in ENV_WORDS:
                bad(f"{path}:{n}: requirement {req!r} is not pinned (NAME==VERSION)")
        lines.append({"subject": cols[0], "release": cols[1], "requirements": cols[2:]})
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {l["subject"] for l in lines}
        if unknown:
            bad(f"--only: no line for {', '.join(sorted(unknown))} in {path}")
        lines = [l for l in lines if l["subject"] in wanted]
    return lines


def shard_of(lines, shard):
    if not shard:
        return lines
    try:
        k, n = (int(x) for x in shard.split("/"))
        assert 1 <= k <= n
    except (ValueError, AssertionError):
        bad(f"--shard: '{shard}' is not K/N with 1 <= K <= N")
    return [l for i, l in enumerate(lines) if i % n == k - 1]


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def script_venv(line):
    """A release made by a script of ours (`script:PATH` as its requirement: NumPy's main branch,
    scripts/numpy-main.sh), which prints the venv's python on its last line."""
    script = os.path.join(ROOT, line["requirements"][0][len("script:"):])
    t0 = time.monotonic()
    p = subprocess.run(["bash", script], capture_output=True, text=True)
    info = {"requirements": line["requirements"], "install_s": round(time.monotonic() - t0, 1), "own_validator": True}
    if p.returncode != 0 or not p.stdout.strip():
        last = [l for l in (p.stderr or p.stdout).splitlines() if l.strip()]
        info["not_installable"] = f"{os.path.basename(script)} exit {p.returncode}: " + (last[-1].strip() if last else "")
        return None, info
    venv = os.path.dirname(os.path.dirname(p.stdout.strip().splitlines()[-1]))
    info["size_mib"] = round(du(venv) / 2**20)
    return venv, info


class DiskBudget:
    """The atlas folder's disk budget with releases side by side: the venvs in use are never
    evicted, and a new venv waits while those in use already fill the budget (one at least runs)."""

    def __init__(self, budget):
        self.budget = budget
        self.in_use = {}  # venv path -> size in bytes
        self.cv = threading.Condition()

    def wait_for_room(self):
        with self.cv:
            self.cv.wait_for(lambda: not self.in_use or sum(self.in_use.values()) < self.budget)

    def use(self, venv):
        if venv:
            with self.cv:
                self.in_use[venv] = du(venv)

    def release(self, venv):
        with self.cv:
            self.in_use.pop(venv, None)
            self.cv.notify_all()


def make_venv(line, cache, base, disk):
    """The line's venv (made if need be) and its info; the venv counts as in use (disk.use) from
    before the atlas lock is let go, so that no other release's sweep can evict it meanwhile."""
    budget = disk.budget
    if line["requirements"][0].startswith("script:"):
        venv, info = script_venv(line)
        disk.use(venv)
        return venv, info
    disk.wait_for_room()
    atlas = os.path.join(cache, "atlas")
    os.makedirs(atlas, exist_ok=True)
    version = subprocess.run([base, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                             check=True).stdout
    key = hashlib.sha256(("\n".join(line["requirements"]) + "\n" + version).encode()).hexdigest()[:12]
    venv = os.path.join(atlas, f"{line['subject']}-{line['release']}-{key}")
    stamp = os.path.join(venv, "dlpv-atlas.json")
    with open(os.path.join(atlas, "atlas.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stamp):
            os.utime(stamp)  # recently used
            disk.use(venv)
            return venv, json.load(open(stamp))
        # the disk budget: the least recently used other venvs go first
        others = []
        for name in os.listdir(atlas):
            path = os.path.join(atlas, name)
            s = os.path.join(path, "dlpv-atlas.json")
            if os.path.isdir(path) and path != venv and path not in disk.in_use:
                others.append((os.path.getmtime(s) if os.path.exists(s) else 0, path))
        used = sum(du(p) for _, p in others)
        for _, path in sorted(others):
            if used <= budget:
                break
            size = du(path)
            shutil.rmtree(path, ignore_errors=True)
            used -= size
            print(f"atlas: disk budget: removed {os.path.basename(path)} ({size / 2**20:.0f} MiB)", file=sys.stderr)
        shutil.rmtree(venv, ignore_errors=True)  # half-made by a killed run: we hold the lock
        t0 = time.monotonic()
        subprocess.run([base, "-m", "venv", venv], check=True)
        env = dict(os.environ, PIP_CACHE_DIR=os.path.join(cache, "pip"), PIP_DISABLE_PIP_VERSION_CHECK="1")
        p = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--only-binary", ":all:"]
                           + pip_requirements(line), capture_output=True, text=True, env=env)
        info = {"requirements": line["requirements"], "install_s": round(time.monotonic() - t0, 1)}
        if p.returncode != 0:
            last = [l for l in (p.stderr or p.stdout).splitlines() if l.strip()]
            info["not_installable"] = last[-1].strip() if last else f"pip exit {p.returncode}"
            shutil.rmtree(venv, ignore_errors=True)
            return None, info
        freeze = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "freeze"], capture_output=True,
                                text=True, env=env).stdout.split()
        info["installed"] = freeze
        info["size_mib"] = round(du(venv) / 2**20)
        with open(stamp + ".part", "w") as f:
            json.dump(info, f)
        os.replace(stamp + ".part", stamp)
        disk.use(venv)
        return venv, info


def site_of(python):
    return subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def layered_python(base, first, second, where):
    """A venv without pip whose path holds `first`'s site-packages, then `second`'s."""
    shutil.rmtree(where, ignore_errors=True)
    subprocess.run([base, "-m", "venv", "--without-pip", where], check=True)
    py = os.path.join(where, "bin", "python")
    with open(os.path.join(site_of(py), "dlpv_layers.pth"), "w") as f:
        for d in (site_of(first), site_of(second)):
            f.write(f"import site; site.addsitedir({d!r})\n")
    return py


def keep_pairs_of(record_path, subject_index):
    """Drop the results that do not have `subject_index` on exactly one side (the release alone
    ran its own pairs; partner-with-partner pairs belong to no release)."""
    rec = json.load(open(record_path))
    def mine(r):
        return (r["subject"] == subject_index) != (r.get("peer") == subject_index)
    rec["results"] = [r for r in rec["results"] if mine(r)]
    rec["pair_matrix"] = [c for c in rec.get("pair_matrix", [])
                          if (c["producer"] == subject_index) != (c["consumer"] == subject_index)]
    rec["incidents"] = [i for i in rec.get("incidents", []) if i.get("subject") in (None, subject_index)]
    json.dump(rec, open(record_path, "w"))
    return len(rec["results"])


def sweep_line(i, line, n, a, cache, base, disk, partners, jobs):
    """One (library, release) line: its venv, its run, its pairs. (manifest entry, records, broken)."""
    label = f"{line['subject']} {line['release']}"
    venv, info = make_venv(line, cache, base, disk)
    entry = {"subject": line["subject"], "release": line["release"], **info}
    if venv is None:
        print(f"atlas: [{i}/{n}] {label}: not installable here: {info['not_installable']}", file=sys.stderr)
        return entry, [], 0
    records, broken = [], 0
    record = os.path.join(a.out, f"{line['subject']}-{line['release']}.json")
    # A release built for another interpreter carries its own validator (script lines).
    env = dict(os.environ) if info.get("own_validator") else dict(os.environ, PYTHONPATH=a.validator_path)
    env = run_env(line, venv, env)
    t0 = time.monotonic()
    repro = ["--repro", os.path.join(a.out, "repro", f"{line['subject']}-{line['release']}")] if a.repro else []
    p = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "validator", line["subject"], "--deterministic",
                        "-q", "--json", record] + repro + jobs + a.validator_args, capture_output=True, text=True, env=env)
    entry["run_s"] = round(time.monotonic() - t0, 1)
    entry["exit_code"] = p.returncode
    verdict = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
    if p.returncode in (0, 1) and os.path.exists(record):
        records.append(record)
        entry["record"] = os.path.basename(record)
    else:
        broken = 1
        entry["error"] = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        verdict = entry["error"]
    print(f"atlas: [{i}/{n}] {label}: {verdict} ({entry['run_s']} s; venv {info.get('size_mib', '?')} MiB)",
          file=sys.stderr)
    mine = [p for p in partners if p != line["subject"]]
    if mine and info.get("own_validator"):
        entry["pairs"] = {"*": {"error": "built for another interpreter than the partners' venv: no pairs"}}
        mine = []
    if mine and "record" in entry:
        py = layered_python(base, os.path.join(venv, "bin", "python"), a.partner_python,
                            os.path.join(a.out, f".pairs-venv-{line['subject']}-{line['release']}"))
        entry["pairs"] = {}
        for partner in mine:  # one run per partner: no partner-with-partner pairs to throw away
            pairs = os.path.join(a.out, f"{line['subject']}-{line['release']}.pairs-{partner}.json")
            t0 = time.monotonic()
            p = subprocess.run([py, "-m", "validator", line["subject"], partner, "--filter", "pair.*",
                                "--filter", "python.pair.*",
                                "--deterministic", "-q", "--json", pairs] + jobs + a.validator_args,
                               capture_output=True, text=True, env=env)
            took = round(time.monotonic() - t0, 1)
            if p.returncode in (0, 1) and os.path.exists(pairs):
                kept = keep_pairs_of(pairs, 0)
                entry["pairs"][partner] = {"results": kept, "s": took, "record": os.path.basename(pairs)}
                records.append(pairs)
                what = f"{kept} pair results"
            else:
                why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
                entry["pairs"][partner] = {"error": why, "s": took}
                what = f"pairs not run: {why}"
            print(f"atlas: [{i}/{n}] {label} with {partner}: {what} ({took} s)", file=sys.stderr)
    disk.release(venv)
    return entry, records, broken


def main():
    ap = argparse.ArgumentParser(prog="atlas/sweep.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["plan", "run"])
    ap.add_argument("--releases", default=os.path.join(ROOT, "atlas", "releases.tsv"))
    ap.add_argument("--only", help="comma-separated subjects (numpy,jax)")
    ap.add_argument("--shard", help="K/N: part K of N of the list")
    ap.add_argument("--out", help="the output folder (run)")
    ap.add_argument("--partners", help="comma-separated partner libraries for the pair cases (torch,jax)")
    ap.add_argument("--partner-python", help="the interpreter the partners are installed for (the peers' venv)")
    ap.add_argument("--repro", action="store_true",
                    help="also write reproducers of each release's unexpected results (DIR/repro/<library>-<release>/)")
    ap.add_argument("--budget-gib", type=float, default=20.0)
    ap.add_argument("--parallel", type=int, default=0,
                    help="releases run side by side (default: the cores), within the disk budget")
    ap.add_argument("--validator-path", default=os.path.join(ROOT, "build", "python"),
                    help="where the validator package is (PYTHONPATH; default build/python)")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "dlpack-validate"),
                    help="dlpack-validate, for report merge (default build/dlpack-validate)")
    ap.add_argument("validator_args", nargs="*", help="after --: more python -m validator options")
    a = ap.parse_args()
    lines = shard_of(read_releases(a.releases, a.only), a.shard)
    if a.command == "plan":
        for l in lines:
            print(f"{l['subject']}\t{l['release']}\t{' '.join(l['requirements'])}")
        return 0
    if not a.out:
        bad("run needs --out DIR")
    if not os.path.exists(os.path.join(a.validator_path, "validator")):
        bad(f"--validator-path {a.validator_path}: no validator package there (build it: scripts/build.sh)")
    partners = [p for p in (a.partners or "").split(",") if p]
    if partners and not a.partner_python:
        bad("--partners needs --partner-python (the pinned peers' venv: bash scripts/peers.sh)")
    os.makedirs(a.out, exist_ok=True)
    cache = os.environ.get("DLPV_CACHE") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                        os.path.expanduser("~/.cache"), "dlpack-validate")
    base = os.environ.get("DLPV_PYTHON", "/usr/bin/python3")
    budget = int(a.budget_gib * 2**30)
    print(f"atlas: {len(lines)} release(s){' (shard ' + a.shard + ')' if a.shard else ''}; venvs in "
          f"{cache}/atlas, disk budget {a.budget_gib:g} GiB", file=sys.stderr)
    t_all = time.monotonic()
    side = max(1, min(a.parallel or len(os.sched_getaffinity(0)), len(lines)))
    # Each release's run gets its share of the cores (-j), unless the caller chose one.
    jobs = [] if any(x in ("-j", "--jobs") or x.startswith(("-j", "--jobs=")) for x in a.validator_args) else \
        ["-j", str(max(1, len(os.sched_getaffinity(0)) // side))]
    disk = DiskBudget(budget)
    print(f"atlas: {side} release(s) side by side, each run with {' '.join(jobs) or 'its own -j'}", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=side) as pool:
        done = list(pool.map(lambda il: sweep_line(il[0], il[1], len(lines), a, cache, base, disk, partners, jobs),
                             enumerate(lines, 1)))
    manifest = [entry for entry, _, _ in done]
    records = [r for _, rs, _ in done for r in rs]
    broken = sum(b for _, _, b in done)
    sweep = os.path.join(a.out, "sweep.json")
    if records:
        p = subprocess.run([a.cli, "report", "merge", *records, "-o", sweep, "-q"], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            bad(f"report merge: {p.stderr.strip()}")
    json.dump({"releases": a.releases, "shard": a.shard, "wall_s": round(time.monotonic() - t_all, 1),
               "lines": manifest}, open(os.path.join(a.out, "sweep-manifest.json"), "w"), indent=1)
    ran = sum("record" in m for m in manifest)
    print(f"atlas: {ran} of {len(lines)} release(s) run, {sum('not_installable' in m for m in manifest)} not "
          f"installable, {broken} broken; {round(time.monotonic() - t_all)} s; merged record {sweep if records else '(none)'}",
          file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
