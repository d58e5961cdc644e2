#!/usr/bin/env python3
"""scripts/venvs.py: the one way this project makes a cached venv (the pinned peers, the wheel
tools, NumPy main's build tools, the atlas's releases, the benchmarks' pytest). Standard library
only; run it with any Python 3.

  venvs.py python NAME (--requirements FILE | --req PKG==V ...) [--base PY] [--installer pip|uv]
                 [--stamp FILE] [--lock NAME] [-q]
      makes the venv if need be and prints its python on the last line
  venvs.py path NAME (--requirements FILE | --req PKG==V ...) [--base PY]
      prints the venv's folder (made or not)
  venvs.py uv          prints the path of a pinned uv (made once, in a venv of its own)
  venvs.py du PATH...  the disk PATHs take together, each file counted once however many hard
                      links it has (the atlas's venvs share uv's cache through hard links)
  venvs.py root        the cache folder

The rules every venv follows:
- One cache folder: $DLPV_CACHE, else $XDG_CACHE_HOME/dlpack-validate, else
  ~/.cache/dlpack-validate.
- A venv is <cache>/<NAME>-<key>, the key a hash of what is installed (the requirements file's
  text, or the requirements one per line) and of the base interpreter's version: a changed pin
  makes a new venv, an unchanged one is reused as is.
- It is made from a chosen interpreter ($DLPV_PYTHON or --base, default Debian's
  /usr/bin/python3), never installed into the system's site-packages, binary wheels only.
- It is made in place (a renamed venv's scripts would name the old path in their #! line)
  under a lock file (<cache>/<lock>.lock, one per NAME unless --lock says), and it counts as made
  only once its stamp (a JSON file in it: what was asked, what pip or uv installed, the seconds
  and the size) is written, last. A folder without its stamp is a killed run's half-made venv:
  it is removed under the lock, never used.
- The installer is pip (its cache in <cache>/pip), or uv (its cache in <cache>/uv, packages
  hard-linked from it into each venv, so venvs that share wheels share their disk: CUDA builds
  of torch). uv does not read pip's configuration: a requirement only this machine's pip
  finds (a local wheel in pip's find-links) falls back to pip.
"""
import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

DEFAULT_BASE = "/usr/bin/python3"
UV_PIN = "uv==0.13.9"


class NotInstallable(Exception):
    """The requirements cannot be installed here; the message is the installer's last line."""


def root():
    if os.environ.get("DLPV_CACHE"):
        return os.environ["DLPV_CACHE"]
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "dlpack-validate")


def log(quiet, message):
    if not quiet:
        print(f"venv: {message}", file=sys.stderr, flush=True)


def base_version(base):
    return subprocess.run([base, "-c", "import sys; print(sys.version)"], capture_output=True, text=True,
                          check=True).stdout


def spec_text(requirements=None, requirements_file=None):
    if requirements_file:
        with open(requirements_file, encoding="utf-8") as f:
            return f.read()
    return "\n".join(requirements) + "\n"


def file_requirements(text):
    return [l.split("#")[0].strip() for l in text.splitlines() if l.split("#")[0].strip()]


def path_of(name, text, version):
    """<cache>/NAME-<key>: the key a hash of what is installed and of the interpreter's version."""
    key = hashlib.sha256((text + version).encode()).hexdigest()[:12]
    return os.path.join(root(), f"{name}-{key}")


def du(*paths, max_links=None):
    """Bytes used by the files under `paths`, each inode once (hard links are shared disk); with
    max_links, only the files with at most that many links."""
    seen, total = set(), 0
    for top in paths:
        for dirpath, _, files in os.walk(top):
            for f in files:
                try:
                    st = os.lstat(os.path.join(dirpath, f))
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) not in seen and (max_links is None or st.st_nlink <= max_links):
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_blocks * 512
    return total


def last_line(p):
    lines = [l.strip() for l in (p.stderr or "").splitlines() + (p.stdout or "").splitlines() if l.strip()]
    errors = [l for l in lines if l.lower().startswith(("error", "×", "x ", "╰─▶", "because"))]
    return (errors or lines or [f"exit {p.returncode}"])[-1]


def _install(venv, base, reqs, installer, quiet):
    """(installer used, completed process) of installing `reqs` into a fresh venv at `venv`."""
    env = dict(os.environ, PIP_CACHE_DIR=os.path.join(root(), "pip"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               UV_CACHE_DIR=os.path.join(root(), "uv"))
    py = os.path.join(venv, "bin", "python")
    if installer == "uv":
        uv = uv_path(quiet=True)
        subprocess.run([uv, "venv", "-q", "--seed", "--python", base, venv], check=True, env=env)
        if not reqs:
            return "uv", subprocess.CompletedProcess([], 0, "", "")
        p = subprocess.run([uv, "pip", "install", "-q", "--python", py, "--only-binary", ":all:",
                            "--link-mode", "hardlink"] + reqs, capture_output=True, text=True, env=env)
        if p.returncode == 0:
            return "uv", p
        log(quiet, f"uv could not install ({last_line(p)}); trying pip, which reads this machine's pip configuration")
        shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([base, "-m", "venv", venv], check=True)
    if not reqs:
        return "pip", subprocess.CompletedProcess([], 0, "", "")
    p = subprocess.run([py, "-m", "pip", "install", "-q", "--only-binary", ":all:"] + reqs, capture_output=True,
                       text=True, env=env)
    return "pip", p


def ensure(name, requirements=None, requirements_file=None, base=None, installer="pip", stamp="dlpv-venv.json",
           lock=None, quiet=False, before_make=None, on_ready=None, key_text=None):
    """(venv path, stamp dict): the venv NAME-<key> with the requirements installed, made if need be.
    `before_make(venv)` runs under the lock before a venv is made (the atlas's disk budget);
    `on_ready(venv)` under the lock once it is there (the atlas marks it in use before another
    sweep's eviction can see it). `key_text` replaces the requirements' text in the key (the atlas
    keys a release by its whole line). Raises NotInstallable (nothing is left behind) when the
    installer fails."""
    base = base or os.environ.get("DLPV_PYTHON") or DEFAULT_BASE
    text = spec_text(requirements, requirements_file)
    reqs = file_requirements(text) if requirements_file else list(requirements)
    version = base_version(base)
    venv = path_of(name, key_text or text, version)
    stamp_path = os.path.join(venv, stamp)

    def ready():
        return os.path.exists(stamp_path) and os.access(os.path.join(venv, "bin", "python"), os.X_OK)

    if ready() and not on_ready:
        os.utime(stamp_path)  # recently used (the atlas evicts the least recently used first)
        return venv, json.load(open(stamp_path))
    os.makedirs(os.path.dirname(venv), exist_ok=True)
    lock_name = lock or os.path.basename(name)
    with open(os.path.join(os.path.dirname(venv), f"{lock_name}.lock"), "w") as lk:
        try:
            fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(quiet, f"another run is making a {lock_name} venv; waiting for it")
            fcntl.flock(lk, fcntl.LOCK_EX)
        if ready():  # made before, or by the run we waited for
            os.utime(stamp_path)
            if on_ready:
                on_ready(venv)
            return venv, json.load(open(stamp_path))
        # half-made by killed runs (ours, or the fill-beside-and-rename policy's .part-PID): we hold the lock
        parent = os.path.dirname(venv)
        for leftover in [venv] + [os.path.join(parent, n) for n in os.listdir(parent)
                                  if n.startswith(os.path.basename(venv) + ".part")]:
            shutil.rmtree(leftover, ignore_errors=True)
        if before_make:
            before_make(venv)
        log(quiet, f"making {venv} from {base} ({installer}: {' '.join(reqs) or 'nothing'})")
        t0 = time.monotonic()
        used, p = _install(venv, base, reqs, installer, quiet)
        took = round(time.monotonic() - t0, 1)
        if p.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            raise NotInstallable(last_line(p))
        freeze = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "freeze", "--all"],
                                capture_output=True, text=True).stdout.split()
        info = {"requirements": reqs, "python": version.split()[0], "installer": used,
                "install_s": took, "size_mib": round(du(venv) / 2**20), "installed": freeze}
        with open(stamp_path + ".part", "w") as f:
            json.dump(info, f, indent=1)
        os.replace(stamp_path + ".part", stamp_path)
        if on_ready:
            on_ready(venv)
        log(quiet, f"made {os.path.basename(venv)} with {used} in {took} s, {info['size_mib']} MiB")
        return venv, info


def uv_path(quiet=False):
    venv, _ = ensure("tool-uv", [UV_PIN], installer="pip", quiet=quiet)
    return os.path.join(venv, "bin", "uv")


def main():
    ap = argparse.ArgumentParser(prog="scripts/venvs.py", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("python")
    q = sub.add_parser("path")
    for x in (p, q):
        x.add_argument("name")
        x.add_argument("--requirements")
        x.add_argument("--req", action="append", default=[])
        x.add_argument("--base")
    p.add_argument("--installer", choices=["pip", "uv"], default="pip")
    p.add_argument("--stamp", default="dlpv-venv.json")
    p.add_argument("--lock")
    p.add_argument("-q", "--quiet", action="store_true")
    sub.add_parser("uv")
    sub.add_parser("root")
    d = sub.add_parser("du")
    d.add_argument("paths", nargs="+")
    a = ap.parse_args()
    if a.command == "root":
        print(root())
    elif a.command == "du":
        print(du(*a.paths))
    elif a.command == "uv":
        print(uv_path())
    elif a.command == "path":
        base = a.base or os.environ.get("DLPV_PYTHON") or DEFAULT_BASE
        print(path_of(a.name, spec_text(a.req or None, a.requirements), base_version(base)))
    else:
        if bool(a.requirements) == bool(a.req):
            print("venv: error: give --requirements FILE or --req PKG==V (not both)", file=sys.stderr)
            return 2
        try:
            venv, info = ensure(a.name, a.req or None, a.requirements, a.base, a.installer, a.stamp, a.lock, a.quiet)
        except NotInstallable as e:
            print(f"venv: could not install into {a.name}: {e}", file=sys.stderr)
            return 75
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"venv: error: {e}", file=sys.stderr)
            return 2
        log(a.quiet, f"{venv} is ready ({info.get('install_s', '?')} s to install, {info.get('size_mib', '?')} MiB)")
        print(os.path.join(venv, "bin", "python"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
