"""atlas/budget.py: the releases' venvs and the disk budget they share (atlas/sweep.py's
DiskBudget, make_venv): each release's venv made once (scripts/venvs.py, with uv), the least
recently used ones of other releases evicted when the atlas folder passes the budget, and a new
venv kept waiting while the venvs in use already fill it. atlas/tests/check_budget.py tests it."""
import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_venvs():
    """scripts/venvs.py, the project's one venv helper, loaded from its file (scripts/ is not a
    package): the atlas's one dependency on scripts/, named here and nowhere else (sweep.py uses
    it through this module). Its ensure() runs our disk-budget hooks under its own lock, which
    its command line cannot, so the atlas imports it rather than running it."""
    path = os.path.join(ROOT, "scripts", "venvs.py")
    spec = importlib.util.spec_from_file_location("dlpv_scripts_venvs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


venvs = _load_venvs()

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
