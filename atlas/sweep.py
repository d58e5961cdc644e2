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
import ast
import concurrent.futures
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import venvs  # noqa: E402  scripts/venvs.py: the project's one venv helper


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
    info["size_mib"] = round(venvs.du(venv) / 2**20)
    return venv, info


class DiskBudget:
    """The atlas's disk budget: its venvs and uv's cache together, each file once (the venvs are
    hard links into the cache). With releases side by side the venvs in use are never evicted,
    and a new venv waits while those in use already fill the budget (one at least runs)."""

    def __init__(self, budget, cache):
        self.budget = budget
        self.atlas = os.path.join(cache, "atlas")
        self.uv_cache = os.path.join(cache, "uv")
        self.in_use = {}  # venv path -> its in-use file, locked shared
        self.cv = threading.Condition()

    def used(self):
        return venvs.du(self.atlas, self.uv_cache)

    def wait_for_room(self):
        with self.cv:
            self.cv.wait_for(lambda: not self.in_use or venvs.du(*self.in_use) < self.budget)

    def use(self, venv):
        """Marks `venv` in use: in this sweep, and for every other sweep on the cache through a
        shared lock on a file in it (an eviction needs the exclusive lock, so it passes it by)."""
        if venv:
            held = open(os.path.join(venv, ".dlpv-in-use"), "a")
            fcntl.flock(held, fcntl.LOCK_SH)
            with self.cv:
                self.in_use[venv] = held

    def release(self, venv):
        with self.cv:
            held = self.in_use.pop(venv, None)
            if held:
                held.close()
            self.cv.notify_all()

    @staticmethod
    def used_elsewhere(path):
        """Whether another sweep holds `path` in use (its shared lock)."""
        try:
            with open(os.path.join(path, ".dlpv-in-use"), "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return False
        except BlockingIOError:
            return True
        except OSError:
            return False

    def make_room(self, venv):
        """Under the atlas lock, before `venv` is made, when the venvs and uv's cache pass the
        budget: the least recently used venvs of other releases not in use (here, or by another
        sweep on the cache) go first, until what they hold alone or with uv's cache (files of at
        most two links) covers the excess; then uv's cache is emptied, which frees those files
        (a venv in use keeps its hard links, so it loses nothing; later releases download again
        what they would have shared)."""
        used = self.used()
        if used <= self.budget:
            return
        others = []
        for name in os.listdir(self.atlas):
            path = os.path.join(self.atlas, name)
            s = os.path.join(path, "dlpv-atlas.json")
            if os.path.isdir(path) and path != venv and path not in self.in_use and not self.used_elsewhere(path):
                others.append((os.path.getmtime(s) if os.path.exists(s) else 0, path))
        gain = 0
        for _, path in sorted(others):
            if used - gain <= self.budget:
                break
            gain += venvs.du(path, max_links=2)
            shutil.rmtree(path, ignore_errors=True)
            print(f"atlas: disk budget: removed {os.path.basename(path)}", file=sys.stderr)
        cleaned = os.path.isdir(self.uv_cache)
        if cleaned:
            subprocess.run([venvs.uv_path(quiet=True), "cache", "clean", "-q"], env=dict(os.environ, UV_CACHE_DIR=self.uv_cache),
                           capture_output=True)
        now = self.used()
        note = " (uv's cache emptied)" if cleaned else ""
        print(f"atlas: disk budget: {used / 2**30:.1f} GiB -> {now / 2**30:.1f} GiB{note}", file=sys.stderr)


def make_venv(line, disk):
    """The line's venv (made with uv if need be, scripts/venvs.py) and its info; the venv counts as
    in use (disk.use) from before the atlas lock is let go, so that no other release's sweep can
    evict it meanwhile."""
    if line["requirements"][0].startswith("script:"):
        venv, info = script_venv(line)
        disk.use(venv)
        return venv, info
    disk.wait_for_room()
    os.makedirs(disk.atlas, exist_ok=True)
    made = []
    try:
        venv, info = venvs.ensure(os.path.join("atlas", f"{line['subject']}-{line['release']}"), pip_requirements(line),
                                  installer="uv", stamp="dlpv-atlas.json", lock="atlas", quiet=True,
                                  key_text="\n".join(line["requirements"]) + "\n",
                                  before_make=lambda v: (disk.make_room(v), made.append(v)),
                                  on_ready=disk.use)
    except venvs.NotInstallable as e:
        return None, {"requirements": line["requirements"], "not_installable": str(e)}
    info = dict(info, requirements=line["requirements"], cached=not made)
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


# ---- the store: what was swept, so that a sweep re-runs only what it must ---------------------
#
# A case's fingerprint is a hash of its declaration (id, title, severity, requirements, role,
# parameters), of the source file that declares it, of its lines in the identity manifest
# (tests/identity/manifest.tsv: its verdicts on every fixture, which CI keeps in step with the
# code, so a change to shared code that alters what a case says shows there), and of EPOCH.
# A release's place in the store is keyed by its requirements, the interpreter and its adapter's
# files. A sweep runs a release's cases whose fingerprint is new or changed, and takes the rest
# from the store; a release with nothing changed needs no venv at all.
EPOCH = "1"  # bump to re-run every case of every release (a change no fixture shows)
FP_FIELDS = ("id", "title", "severity", "requirements", "role", "params")
LAYOUTS_FILE = "python_shim/validator/adapters/_numpy_layouts.py"


def sha(text):
    return hashlib.sha256(text.encode()).hexdigest()


class Sources:
    """File texts and identity-manifest lines, from the checkout or from a commit (seed)."""

    def __init__(self, commit=None):
        self.commit = commit
        self.files = {}
        manifest = self.text("tests/identity/manifest.tsv")
        self.manifest = {}
        for row in manifest.splitlines():
            cols = row.split("\t")
            if len(cols) >= 3 and cols[0] == "case":
                self.manifest.setdefault(cols[1], []).append(cols[2])
        # subject -> its built-in adapter's module, as of this tree: the library table's adapter
        # column (python_shim/validator/libraries.tsv); a tree from before the table, the
        # BUILTIN map written out in the adapters' __init__.py
        table = self.text("python_shim/validator/libraries.tsv")
        if table:
            rows = [line.split("\t") for line in table.splitlines() if line and not line.startswith("#")]
            self.adapter_modules = {r[0]: r[1] for r in rows[1:] if len(r) > 1 and r[1] != "-"}
        else:
            self.adapter_modules = dict(re.findall(r'"(\w+)": "validator\.adapters\.(\w+)"',
                                                   self.text("python_shim/validator/adapters/__init__.py")))

    def text(self, path):
        if path not in self.files:
            if self.commit:
                p = subprocess.run(["git", "-C", ROOT, "show", f"{self.commit}:{path}"], capture_output=True, text=True)
                self.files[path] = p.stdout if p.returncode == 0 else ""
            else:
                try:
                    self.files[path] = open(os.path.join(ROOT, path), encoding="utf-8").read()
                except OSError:
                    self.files[path] = ""
        return self.files[path]

    def fingerprint(self, decl, source):
        core = json.dumps({k: decl.get(k) for k in FP_FIELDS}, sort_keys=True)
        return sha("\n".join([core, sha(self.text(source)) if source else "", *self.manifest.get(decl["id"], []), EPOCH]))[:16]

    def adapter(self, subject):
        """The code of the subject's adapter (and of the NumPy-backed base it builds on), less
        comments and docstrings: a reworded comment re-runs nothing."""
        module = self.adapter_modules.get(subject)
        if not module:
            return ""
        text = self.text(f"python_shim/validator/adapters/{module}.py")
        files = [text] + ([self.text(LAYOUTS_FILE)] if "_numpy_layouts" in text else [])
        return sha("".join(code_digest(t) for t in files))[:12]


def code_digest(text):
    """A Python file's code: its syntax tree without docstrings (comments are not in it)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return sha(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return sha(ast.dump(tree))


def declarations(a, base, pairs):
    """{case id: declaration} of the cases a release runs alone, or of the pair cases."""
    subjects = ["validator", "json"] if pairs else ["validator"]  # --list needs no library: any module names a subject
    filters = ["--filter", "pair.*", "--filter", "python.pair.*"] if pairs else []
    p = subprocess.run([base, "-m", "validator", *subjects, "--list", "--json", "-", *filters], capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=a.validator_path))
    if p.returncode != 0:
        bad(f"cannot list the cases: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
    return {d["id"]: d for d in json.loads(p.stdout)}


def fingerprints(decls, sources, salt=""):
    return {i: sources.fingerprint(d, d.get("source")) + salt for i, d in decls.items()}


def line_key(line, base_version, sources):
    return sha("\n".join(line["requirements"]) + "\n" + base_version + sources.adapter(line["subject"]))[:12]


def partner_key(a, partner, sources):
    return sha(os.path.realpath(a.partner_python) + sources.adapter(partner))[:8]


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def save(path, data):
    with open(path + ".part", "w") as f:
        json.dump(data, f)
    os.replace(path + ".part", path)


def without(record_path, ids, out_path):
    """The record at record_path less the results of `ids`, written to out_path; how many kept."""
    rec = load(record_path)
    rec["results"] = [r for r in rec["results"] if r["id"] not in ids]
    save(out_path, rec)
    return len(rec["results"])


def name_unloaded(record_path, line):
    """A release that could not be loaded reports no name of its own ('(not loaded)'): the record
    names it by its line, so that releases which all fail to load stay apart in the merge."""
    rec = load(record_path)
    subjects = rec.get("subjects") or []
    if subjects and subjects[0].get("name") == "(not loaded)":
        subjects[0]["name"] = f"{line['subject']} {line['release']}"
        subjects[0].setdefault("notes", []).append("named by the atlas's release list: the subject did not load")
        save(record_path, rec)


def splice(a, kept, fresh, out_path):
    """One record: `kept` (the store's, less what was re-run) and `fresh` (what was re-run)."""
    p = subprocess.run([a.cli, "report", "merge", kept, fresh, "-o", out_path, "-q"], capture_output=True, text=True)
    if p.returncode not in (0, 1) or not os.path.exists(out_path):
        raise RuntimeError(f"report merge: {p.stderr.strip()}")


def what_to_run(fps, stored_fps, have_record):
    """(case ids to run, all of them?) given the current and the stored fingerprints."""
    if not have_record or not stored_fps:
        return sorted(fps), True
    stale = sorted(i for i, f in fps.items() if stored_fps.get(i) != f)
    return stale, len(stale) == len(fps)


def sweep_line(i, line, n, a, disk, partners, jobs, state):
    """One (library, release) line: what the store holds, its venv if anything must run, its run
    (or the cases that changed), its pairs. (manifest entry, records, broken)."""
    label = f"{line['subject']} {line['release']}"
    key = line_key(line, state["base_version"], state["sources"])
    sdir = os.path.join(a.store, f"{line['subject']}-{line['release']}-{key}")
    os.makedirs(sdir, exist_ok=True)
    stem = f"{line['subject']}-{line['release']}"
    mine = [p for p in partners if p != line["subject"]]
    # The partners a sweep paired this release with before stay in its record: the store carries
    # them (run again where their cases changed, unless --reuse-stale), whatever --partners says.
    for f in sorted(os.listdir(sdir)):
        m = re.fullmatch(r"pairs-(\w+)\.json", f)
        if m and m.group(1) not in mine and m.group(1) != line["subject"]:
            mine.append(m.group(1))
    jobs_todo = []  # (fingerprints, stored record, stored fingerprints, output record, partner or None)
    jobs_todo.append((state["alone_fps"], os.path.join(sdir, "run.json"), os.path.join(sdir, "run.fp.json"),
                      os.path.join(a.out, f"{stem}.json"), None))
    for partner in mine:
        salt = partner_key(a, partner, state["sources"])
        fps = {k: v + salt for k, v in state["pair_fps"].items()}
        jobs_todo.append((fps, os.path.join(sdir, f"pairs-{partner}.json"),
                          os.path.join(sdir, f"pairs-{partner}.fp.json"), os.path.join(a.out, f"{stem}.pairs-{partner}.json"),
                          partner))
    plans = []
    stale = 0
    entry_refused = {}
    for fps, srec, sfp, out, partner in jobs_todo:
        refused = partner and load(srec + ".refused-" + partner_key(a, partner, state["sources"]))
        if refused:  # the partner cannot be imported beside this release: a fact of the two venvs, kept
            entry_refused[partner] = refused
            continue
        if a.stored_only and not os.path.exists(srec):  # nothing runs: what the store lacks is left out
            continue
        ids, everything = what_to_run(fps, load(sfp, {}), os.path.exists(srec))
        if a.reuse_stale in ("all", "pairs" if partner else "-") and os.path.exists(srec):
            # as stored: the changed cases are counted, not run
            stale += len(ids)
            ids, everything = [], False
            fps = load(sfp, {})
        plans.append((fps, srec, sfp, out, partner, ids, everything))
    entry = dict(load(os.path.join(sdir, "line.json"), {}), subject=line["subject"], release=line["release"])
    entry.pop("not_installable", None)
    entry.pop("stale_cases", None)
    entry["store"] = os.path.basename(sdir)
    to_run = sum(len(ids) for *_, ids, _ in plans)
    venv = None
    if to_run:
        venv, info = make_venv(line, disk)
        entry.update(info)
        if venv is None:
            print(f"atlas: [{i}/{n}] {label}: not installable here: {info['not_installable']}", file=sys.stderr)
            entry = {k: v for k, v in entry.items() if k in ("subject", "release", "store", "requirements", "not_installable")}
            save(os.path.join(sdir, "line.json"), entry)
            return entry, [], 0
    records, broken = [], 0
    env = dict(os.environ) if entry.get("own_validator") else dict(os.environ, PYTHONPATH=a.validator_path)
    if venv:
        env = run_env(line, venv, env)
    entry["pairs"] = {p: dict(r, stored=True) for p, r in entry_refused.items()}
    py = None
    for fps, srec, sfp, out, partner, ids, everything in plans:
        name = "alone" if partner is None else f"with {partner}"
        if not ids:  # all from the store
            kept = without(srec, set(load(sfp, {})) - set(fps), out)
            name_unloaded(out, line)
            records.append(out)
            if partner is None:
                entry["record"] = os.path.basename(out)
            else:
                entry["pairs"][partner] = dict(entry["pairs"].get(partner, {}), record=os.path.basename(out), results=kept)
            continue
        if partner is not None and "record" not in entry:
            continue
        if partner is not None and entry.get("own_validator"):
            entry["pairs"] = {"*": {"error": "built for another interpreter than the partners' venv: no pairs"}}
            break
        t0 = time.monotonic()
        scratch = out + ".part.json"
        if partner is None:
            repro = ["--repro", os.path.join(a.out, "repro", stem)] if a.repro else []
            cmd = [os.path.join(venv, "bin", "python"), "-m", "validator", line["subject"], "--deterministic", "-q"] \
                + repro + jobs + a.validator_args
        else:
            if py is None:
                py = layered_python(state["base"], os.path.join(venv, "bin", "python"), a.partner_python,
                                    os.path.join(a.out, f".pairs-venv-{stem}"))
            cmd = [py, "-m", "validator", line["subject"], partner, "--deterministic", "-q"] + jobs + a.validator_args
            if everything:
                cmd += ["--filter", "pair.*", "--filter", "python.pair.*"]
        target = out if everything else scratch
        filters = [] if everything else [x for c in ids for x in ("--filter", c)]
        p = subprocess.run(cmd + ["--json", target] + filters, capture_output=True, text=True, env=env)
        took = round(time.monotonic() - t0, 1)
        why = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        ok = p.returncode in (0, 1) and os.path.exists(target)
        if ok and partner is not None:
            keep_pairs_of(target, 0)
        if ok and not everything:
            kept_path = out + ".kept.json"
            without(srec, set(ids) | (set(load(sfp, {})) - set(fps)), kept_path)
            splice(a, kept_path, scratch, out)
            for f in (kept_path, scratch):
                os.remove(f)
        ran = f"{len(ids)} case(s) changed since the stored sweep" if not everything else "every case"
        if ok:
            shutil.copyfile(out, srec)
            save(sfp, fps)
            name_unloaded(out, line)
            records.append(out)
            verdict = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
            if partner is None:
                entry.update(record=os.path.basename(out), run_s=took, exit_code=p.returncode, ran=ran,
                             validator_commit=state["commit"])
                entry.pop("seeded", None)
            else:
                entry["pairs"][partner] = {"record": os.path.basename(out), "s": took, "ran": ran,
                                           "results": len(load(out)["results"])}
                verdict = f"{entry['pairs'][partner]['results']} pair results"
        else:
            verdict = why
            if partner is None:
                broken = 1
                entry.update(error=why, run_s=took, exit_code=p.returncode)
            else:
                entry["pairs"][partner] = {"error": why, "s": took}
                verdict = f"pairs not run: {why}"
                if p.returncode == 2 and "cannot load Python subject" in why:  # not retried while both venvs stay
                    save(srec + ".refused-" + partner_key(a, partner, state["sources"]), entry["pairs"][partner])
        print(f"atlas: [{i}/{n}] {label} {name}: {verdict} ({ran}; {took} s)", file=sys.stderr)
    if not to_run:
        print(f"atlas: [{i}/{n}] {label}: unchanged, from the store", file=sys.stderr)
    entry["from_store"] = not to_run
    if stale:
        entry["stale_cases"] = stale
    save(os.path.join(sdir, "line.json"), entry)
    if venv:
        disk.release(venv)
    return entry, records, broken


def seed(a, lines, partners, state, decls):
    """Fills the store from a sweep's output folder made before the store existed (its records and
    sweep-manifest.json), with the fingerprints its cases had at that commit, so that the next
    sweep re-runs only what changed since."""
    old = Sources(a.commit)
    manifest = {(m["subject"], m["release"]): m for m in load(os.path.join(a.seed_from, "sweep-manifest.json"),
                                                              {"lines": []})["lines"]}
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", a.commit], capture_output=True, text=True).stdout.strip()

    def fps_of(record, salt=""):
        out = {}
        for r in load(record)["results"]:
            src = decls.get(r["id"], {}).get("source")
            out[r["id"]] = old.fingerprint(r, src) + salt
        return out

    seeded = 0
    for line in lines:
        stem = f"{line['subject']}-{line['release']}"
        rec = os.path.join(a.seed_from, f"{stem}.json")
        if not os.path.exists(rec):
            continue
        sdir = os.path.join(a.store, f"{stem}-{line_key(line, state['base_version'], old)}")
        os.makedirs(sdir, exist_ok=True)
        shutil.copyfile(rec, os.path.join(sdir, "run.json"))
        save(os.path.join(sdir, "run.fp.json"), fps_of(rec))
        entry = dict(manifest.get((line["subject"], line["release"]), {}), validator_commit=commit, seeded=True)
        for partner in partners:
            prec = os.path.join(a.seed_from, f"{stem}.pairs-{partner}.json")
            if os.path.exists(prec):
                shutil.copyfile(prec, os.path.join(sdir, f"pairs-{partner}.json"))
                save(os.path.join(sdir, f"pairs-{partner}.fp.json"), fps_of(prec, partner_key(a, partner, old)))
            why = entry.get("pairs", {}).get(partner, {}).get("error", "")
            if "cannot load Python subject" in why:
                save(os.path.join(sdir, f"pairs-{partner}.json.refused-{partner_key(a, partner, state['sources'])}"),
                     entry["pairs"][partner])
        save(os.path.join(sdir, "line.json"), entry)
        seeded += 1
    print(f"atlas: seeded {seeded} release(s) into {a.store} from {a.seed_from} (validator {commit[:12]})", file=sys.stderr)
    return 0


def main():
    ap = argparse.ArgumentParser(prog="atlas/sweep.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=["plan", "run", "seed"])
    ap.add_argument("--store", help="what earlier sweeps found, per release (default $DLPV_CACHE/atlas-store)")
    ap.add_argument("--from", dest="seed_from", help="seed: a sweep's output folder made before the store existed")
    ap.add_argument("--commit", help="seed: the commit of the validator that made it")
    ap.add_argument("--releases", default=os.path.join(ROOT, "atlas", "releases.tsv"))
    ap.add_argument("--only", help="comma-separated subjects (numpy,jax)")
    ap.add_argument("--shard", help="K/N: part K of N of the list")
    ap.add_argument("--out", help="the output folder (run)")
    ap.add_argument("--partners", help="comma-separated partner libraries for the pair cases (torch,jax)")
    ap.add_argument("--partner-python", help="the interpreter the partners are installed for (the peers' venv)")
    ap.add_argument("--repro", action="store_true",
                    help="also write reproducers of each release's unexpected results (DIR/repro/<library>-<release>/)")
    ap.add_argument("--reuse-stale", nargs="?", const="all", choices=["all", "pairs"],
                    help="take a release's stored records as they are even where cases changed since (counted in the "
                         "manifest as stale_cases, and shown on the page): all of them, to render the atlas without "
                         "running, or only the pair records (the releases alone are brought up to date)")
    ap.add_argument("--stored-only", action="store_true",
                    help="run nothing: the atlas from the store as it is (--reuse-stale all), leaving out the "
                         "releases and partners it has no record of")
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
    if a.command == "seed":
        if not (a.seed_from and a.commit):
            bad("seed needs --from DIR and --commit REV")
    elif not a.out:
        bad("run needs --out DIR")
    if not os.path.exists(os.path.join(a.validator_path, "validator")):
        bad(f"--validator-path {a.validator_path}: no validator package there (build it: scripts/build.sh)")
    partners = [p for p in (a.partners or "").split(",") if p]
    if partners and not a.partner_python:
        bad("--partners needs --partner-python (the pinned peers' venv: bash scripts/peers.sh)")
    cache = venvs.root()
    a.store = a.store or os.path.join(cache, "atlas-store")
    base = os.environ.get("DLPV_PYTHON", "/usr/bin/python3")
    sources = Sources()
    alone, pairs = declarations(a, base, False), declarations(a, base, True)
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=40"], capture_output=True,
                            text=True).stdout.strip()
    state = {"commit": commit, "base": base, "base_version": venvs.base_version(base), "sources": sources,
             "alone_fps": fingerprints(alone, sources), "pair_fps": fingerprints(pairs, sources)}
    if a.stored_only:
        a.reuse_stale = "all"
    if a.command == "seed":
        return seed(a, lines, partners, state, {**alone, **pairs})
    os.makedirs(a.out, exist_ok=True)
    budget = int(a.budget_gib * 2**30)
    disk = DiskBudget(budget, cache)
    print(f"atlas: {len(lines)} release(s){' (shard ' + a.shard + ')' if a.shard else ''}; store {a.store}; venvs in "
          f"{cache}/atlas, made with uv (its cache {cache}/uv); disk budget {a.budget_gib:g} GiB for both, "
          f"{disk.used() / 2**30:.1f} GiB used", file=sys.stderr)
    t_all = time.monotonic()
    side = max(1, min(a.parallel or len(os.sched_getaffinity(0)), len(lines)))
    # Each release's run gets its share of the cores (-j), unless the caller chose one.
    jobs = [] if any(x in ("-j", "--jobs") or x.startswith(("-j", "--jobs=")) for x in a.validator_args) else \
        ["-j", str(max(1, len(os.sched_getaffinity(0)) // side))]
    print(f"atlas: {side} release(s) side by side, each run with {' '.join(jobs) or 'its own -j'}", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=side) as pool:
        done = list(pool.map(lambda il: sweep_line(il[0], il[1], len(lines), a, disk, partners, jobs, state),
                             enumerate(lines, 1)))
    manifest = [entry for entry, _, _ in done]
    records = [r for _, rs, _ in done for r in rs]
    broken = sum(b for _, _, b in done)
    sweep = os.path.join(a.out, "sweep.json")
    if os.path.exists(sweep):  # the page's "what changed" compares the two (atlas/page.py --previous)
        os.replace(sweep, os.path.join(a.out, "sweep-previous.json"))
    if records:
        p = subprocess.run([a.cli, "report", "merge", *records, "-o", sweep, "-q"], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            bad(f"report merge: {p.stderr.strip()}")
    used = disk.used()
    json.dump({"releases": a.releases, "shard": a.shard, "wall_s": round(time.monotonic() - t_all, 1),
               "disk_gib": round(used / 2**30, 1), "lines": manifest},
              open(os.path.join(a.out, "sweep-manifest.json"), "w"), indent=1)
    ran = sum("record" in m for m in manifest)
    stored = sum(bool(m.get("from_store")) for m in manifest)
    print(f"atlas: {ran} of {len(lines)} release(s) in the record ({stored} unchanged, from the store), "
          f"{sum('not_installable' in m for m in manifest)} not installable, {broken} broken; "
          f"{round(time.monotonic() - t_all)} s; venvs and uv's cache {used / 2**30:.1f} GiB on disk; merged record "
          f"{sweep if records else '(none)'}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
