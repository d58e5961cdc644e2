#!/usr/bin/env python3
"""tests/install/check_pip.py: what `pip install <repo>` gives (pyproject.toml, scikit-build-core),
and the Python API `validator.run`.

  --mode pip (install.pip): a fresh venv (--system-site-packages, so Debian's NumPy is there
      without network), `pip install <repo>`, then from that venv: `python -m validator numpy
      --filter 'python.kw.*' --json OUT`, `dlpack-validate --version`, the installed CLI on a
      plugin (the example toy plugin: its workers re-execute /proc/self/exe), and the API checks.
      Fast on reruns: the venv has a fixed path, pyproject.toml's pinned build requirements
      come from scripts/build-wheel.sh's tools venv (on PYTHONPATH for the install: the same
      headers and generator as install.wheel's build, so ccache serves one from the other),
      then `pip install --no-build-isolation` with a persistent scikit-build-core build dir in
      the tree (build-pip-test/, git-ignored), so an unchanged tree rebuilds nothing and a fresh
      clone's build hits ccache (ccache_env). The venv lives under
      ~/.cache/dlpack-validate/pip-test/<hash of the source path>/ (DLPV_PIP_TEST_CACHE), pip's
      cache under ~/.cache/dlpack-validate/pip. DLPV_PIP_ISOLATED=1 installs the way a user
      does instead (build isolation, a throwaway build dir: a cold build).
  --mode api (python.api): the API checks with this interpreter (PYTHONPATH=build/python).
  --api-checks: the API checks themselves (run in a child interpreter; stdout must stay empty
      but for the final "api ok", so a quiet run is shown to print nothing).
Exit 77 (CTest: skipped) when the pinned build requirements cannot be installed (no PyPI and
nothing in the cache); the message says so.
"""
import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    log("$", " ".join(cmd))
    t = time.monotonic()
    r = subprocess.run(cmd, **kw)
    log(f"  ({time.monotonic() - t:.1f} s, exit {r.returncode})")
    return r


def fail(msg):
    log("FAIL:", msg)
    sys.exit(1)


# ---- the API checks (run inside the interpreter under test) ---------------------------------
def api_checks(work, fake):
    import validator
    assert callable(validator.run), "validator.run missing"
    assert issubclass(validator.BadInput, ValueError)
    os.makedirs(work, exist_ok=True)
    before = os.environ.get("PYTHONPATH")

    rec = validator.run(["numpy"], filters=["python.kw.*"])
    s = rec["summary"]
    assert s["exit_code"] == 0, s
    assert s["verdict"] == "pass", s
    assert rec["results"] and all(r["id"].startswith("python.kw.") for r in rec["results"]), \
        [r["id"] for r in rec["results"]]
    assert rec["command_line"][:2] == ["python -m validator", "numpy"], rec["command_line"]
    assert rec["tool"]["version"] == validator.__version__, rec["tool"]
    assert os.environ.get("PYTHONPATH") == before, "PYTHONPATH not restored"
    log(f"api: numpy python.kw.*: {s['total']} cases, {s['counts']}")

    # the keywords reach the harness; json= is written too; a single string is one subject
    out = os.path.join(work, "api-numpy.json")
    rec2 = validator.run("numpy", filters="python.kw.*", exclude=["python.kw.copy*"],
                         deterministic=True, json=out, timeout=20)
    ids = {r["id"] for r in rec2["results"]}
    assert ids and not any(i.startswith("python.kw.copy") for i in ids), ids
    assert "started_at" not in rec2 or not rec2["started_at"], "deterministic record has a time"
    with open(out, encoding="utf-8") as f:
        assert json.load(f) == rec2, "json= file differs from the returned record"

    # bad input: exit code 2 of the command becomes BadInput, with the validator's line
    for kw, words in ((dict(subjects=["numpy"], filters=["no.such.case.*"]), "no case matches"),
                      (dict(subjects=["no_such_package_dlpv"]), "no_such_package_dlpv"),
                      (dict(subjects=["numpy"], timeout=0), "timeout"),
                      (dict(subjects=["numpy"], isolate="fork"), "isolate"),
                      (dict(subjects=[]), "subjects")):
        try:
            validator.run(**kw)
        except validator.BadInput as e:
            assert words in str(e), f"{kw}: message {str(e)!r} does not name {words!r}"
            log(f"api: BadInput for {kw}: {e}")
        else:
            raise AssertionError(f"{kw}: no BadInput")

    # an installed package registers the pytest plugin (docs/pytest.md) by this entry point
    # (the build tree, --fake, has no metadata)
    if not fake:
        from importlib import metadata
        try:
            eps = metadata.entry_points(group="pytest11")
        except TypeError:  # Python < 3.10
            eps = metadata.entry_points().get("pytest11", [])
        found = [e.value for e in eps if e.name == "dlpack_validate"]
        assert found == ["validator.pytest_plugin"], f"pytest11 entry point: {found}"
        log("api: the pytest11 entry point names validator.pytest_plugin")

    if fake:  # a planted bug: the record says so, exit_code 1 (no exception)
        rec3 = validator.run(["fakearray.variants:no_destructor"],
                             filters=["python.capsule.destructor.unconsumed"])
        assert rec3["summary"]["exit_code"] == 1, rec3["summary"]
        assert [r["status"] for r in rec3["results"]] == ["fail"], rec3["results"]
        log("api: a planted bug is exit_code 1 in the record")
    print("api ok")


def run_api_checks(python, work, env=None, fake=False):
    cmd = [python, os.path.abspath(__file__), "--api-checks", "--work", work]
    if fake:
        cmd.append("--fake")
    r = sh(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0 or r.stdout != "api ok\n":
        fail(f"API checks: exit {r.returncode}, stdout {r.stdout!r} (quiet runs must print "
             f"nothing on stdout)")


# ---- pip ------------------------------------------------------------------------------------
def build_requirements(source):
    text = open(os.path.join(source, "pyproject.toml"), encoding="utf-8").read()
    m = re.search(r"^requires\s*=\s*\[([^\]]*)\]", text, re.M)
    if not m:
        fail("pyproject.toml: no build-system requires")
    reqs = re.findall(r'"([^"]+)"', m.group(1))
    for r in reqs:
        if "==" not in r:
            fail(f"pyproject.toml: build requirement {r!r} is not pinned to an exact version")
    return reqs


def ccache_env(cache_root, source):
    """The environment that puts ccache (Debian's, scripts/setup.sh) in front of the compilers of
    a scikit-build-core build (CMake reads CMAKE_<LANG>_COMPILER_LAUNCHER from the environment at
    the first configure), sharing one cache with install.wheel's build (tests/install/
    check_wheel.sh sets the same). Both builds lie in the source tree (build-pip-test/ and
    build-wheel-test/, one level down, as scripts/build.sh's build/), and paths under the tree are
    hashed relative to the build folder (base_dir: the tree), so the two builds' commands hash
    alike, and alike from any clone of the same tree wherever it lies: with the builds under
    ~/.cache (base_dir /) a clone at another path missed 60 of 64 compiles, and install.pip
    compiled the package cold (about 125 s on two cores). Empty without ccache: a cold build."""
    ccache = shutil.which("ccache")
    if not ccache:
        return {}
    return {"CMAKE_C_COMPILER_LAUNCHER": ccache, "CMAKE_CXX_COMPILER_LAUNCHER": ccache,
            "CCACHE_DIR": os.path.join(cache_root, "ccache"), "CCACHE_BASEDIR": source, "CCACHE_NOHASHDIR": "1"}


def wheel_tools_python(source, base):
    """The python of scripts/build-wheel.sh's tools venv (pyproject.toml's build requirements and
    scripts/wheel-tools.txt's pins, made by scripts/venvs.py), or None when it cannot be made."""
    pins = [l.strip() for l in open(os.path.join(source, "scripts", "wheel-tools.txt"), encoding="utf-8")
            if l.strip() and not l.startswith("#")]
    args = []
    for r in build_requirements(source) + pins:
        args += ["--req", r]
    r = subprocess.run([base, os.path.join(source, "scripts", "venvs.py"), "python", "wheel-tools", *args,
                        "--base", base], capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        sys.stderr.write(r.stderr[-4000:])
        return None
    return lines[-1]


@contextlib.contextmanager
def locked(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def pip_mode(a):
    source = os.path.realpath(a.source)
    home_cache = os.path.expanduser("~/.cache/dlpack-validate")
    key = hashlib.sha1(source.encode()).hexdigest()[:12]
    root = os.environ.get("DLPV_PIP_TEST_CACHE") or os.path.join(home_cache, "pip-test", key)
    isolated = os.environ.get("DLPV_PIP_ISOLATED") == "1"
    pip_cache = os.path.join(home_cache, "pip")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    with locked(os.path.join(root, "lock")):
        venv = os.path.join(root, "venv")
        shutil.rmtree(venv, ignore_errors=True)
        sh([a.base_python, "-m", "venv", "--system-site-packages", venv], check=True)
        py = os.path.join(venv, "bin", "python")
        pip = [py, "-m", "pip", "--cache-dir", pip_cache, "--disable-pip-version-check"]
        # Never let the install pull a (CUDA) torch or anything else: no runtime dependencies.
        env = dict(os.environ)
        # One core unless told otherwise: CTest runs other tests beside this one.
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", "1")
        env.update(ccache_env(home_cache, source))
        t0 = time.monotonic()
        # -v, as README says: without it pip shows only "Building wheel ... still running..."
        # for the whole source build (30 minutes on a busy machine); with it, the build's progress.
        if isolated:
            cmd = pip + ["install", "-v", source]
        else:
            # The pinned build requirements come from scripts/build-wheel.sh's tools venv (the
            # same pins, scripts/wheel-tools.txt, the same venv): install.pip and install.wheel
            # then compile the same commands against the same pybind11 headers and the same
            # generator (ninja), and with ccache (CTest's environment) the second build is the
            # first one's cache hits. The venv is kept while the pins stay the same: reinstalled
            # headers (new mtimes) would rebuild the module.
            tools_py = wheel_tools_python(source, a.base_python)
            if tools_py is None:
                log(f"SKIP: the pinned build requirements could not be installed "
                    f"(no PyPI and not in {pip_cache})")
                return SKIP
            tools = subprocess.run([tools_py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   check=True, capture_output=True, text=True).stdout.strip()
            env["PYTHONPATH"] = tools
            # ninja from the tools venv, as build-wheel.sh has it on PATH
            env["PATH"] = os.path.dirname(tools_py) + os.pathsep + env.get("PATH", "")
            cmd = pip + ["install", "-v", "--no-build-isolation",
                         "--config-settings=build-dir=" + os.path.join(source, "build-pip-test"), source]
        r = sh(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            sys.stderr.write(r.stdout[-20000:])
            fail("pip install failed")
        log(f"pip install ({'isolated, cold' if isolated else 'incremental'}): "
            f"{time.monotonic() - t0:.1f} s")
        steps = re.findall(r"^\s*\[\d+/\d+\] .*$|^\s*\[\s*\d+%\] .*$|ninja: no work to do", r.stdout, re.M)
        if not steps:
            sys.stderr.write(r.stdout[-5000:])
            fail("pip install -v showed no progress of the build (no [k/n] or [ n%] lines)")
        log(f"pip install -v: {len(steps)} progress line(s), the last: {steps[-1].strip()[:100]}")
        listed = subprocess.run(pip + ["list", "--local", "--format=json"], check=True,
                                capture_output=True, text=True).stdout
        names = sorted(p["name"].lower() for p in json.loads(listed))
        env.pop("PYTHONPATH", None)
        log("venv packages:", ", ".join(names))
        if "torch" in names:
            fail("the install pulled torch into the venv")

        # python -m validator from the venv (not from the source tree: run in the work dir)
        out = os.path.join(a.work, "numpy-kw.json")
        r = sh([py, "-m", "validator", "numpy", "--filter", "python.kw.*", "--json", out],
               cwd=a.work, env=env)
        if r.returncode != 0:
            fail(f"python -m validator numpy: exit {r.returncode}")
        rec = json.load(open(out, encoding="utf-8"))
        if rec["summary"]["exit_code"] != 0 or not rec["results"]:
            fail(f"numpy record: {rec['summary']}")
        where = subprocess.run([py, "-c", "import validator, sys; print(validator.__file__)"],
                               cwd=a.work, check=True, capture_output=True, text=True).stdout
        if not where.startswith(venv):
            fail(f"validator imported from {where.strip()}, not from the venv")

        # the C++ CLI in the venv's bin
        cli = os.path.join(venv, "bin", "dlpack-validate")
        r = sh([cli, "--version"], stdout=subprocess.PIPE, text=True)
        if r.returncode != 0 or "0.1.0" not in r.stdout:
            fail(f"dlpack-validate --version: exit {r.returncode}, {r.stdout!r}")
        if a.plugin:
            r = sh([cli, a.plugin, "--filter", "producer.tensor.float32.*", "-q",
                    "--json", os.path.join(a.work, "toy.json")], cwd=a.work)
            if r.returncode != 0:
                fail(f"venv/bin/dlpack-validate on {a.plugin}: exit {r.returncode}")

        env.pop("PYTHONPATH", None)
        run_api_checks(py, a.work, env=dict(env, PYTHONPATH=""))
    log("ok: pip install builds the venv's validator package and dlpack-validate command")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["pip", "api"])
    ap.add_argument("--api-checks", action="store_true")
    ap.add_argument("--fake", action="store_true", help="fakearray is importable (build tree)")
    ap.add_argument("--source", help="the repository")
    ap.add_argument("--base-python", default="/usr/bin/python3")
    ap.add_argument("--plugin", help="a plugin for the installed CLI (the example toy plugin)")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if a.api_checks:
        api_checks(a.work, a.fake)
        return 0
    if a.mode == "api":
        shutil.rmtree(a.work, ignore_errors=True)
        run_api_checks(sys.executable, a.work, fake=a.fake)
        log("ok: validator.run")
        return 0
    if a.mode == "pip":
        if not a.source:
            ap.error("--mode pip needs --source")
        return pip_mode(a)
    ap.error("--mode or --api-checks")


if __name__ == "__main__":
    sys.exit(main())
