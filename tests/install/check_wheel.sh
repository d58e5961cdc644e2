#!/usr/bin/env bash
# tests/install/check_wheel.sh (CTest: install.wheel): the maintainer's wheel route, built once
# with scripts/build-wheel.sh (pip wheel + auditwheel repair to a manylinux tag), then installed
# into a fresh venv on a PATH without a compiler, and run from there.
#
#   bash tests/install/check_wheel.sh --source SRC --work DIR [--base-python PY]
#        [--plugin LIB.so] [--fake-stage DIR]
#
# The wheel is cached per checkout, keyed on the source tree's content (the files git tracks or
# would track, read from the working tree) and on the interpreter: an unchanged tree reuses it
# and builds nothing. The wheel lives under $DLPV_CACHE/wheel-test/<hash of the source path>/
# (default cache ~/.cache/dlpack-validate; build-wheel.sh's tools venv is in $DLPV_CACHE too),
# scikit-build-core's build folder in the tree (build-wheel-test/, git-ignored), so that a
# changed tree rebuilds incrementally and a fresh clone's build hits ccache.
# A lock serialises runs on one checkout.
#
# Then, with PATH holding only the venv's bin (no cc, c++, g++, gcc, clang or cmake: checked),
# an empty environment and no pip configuration or index: `pip install WHEEL` (timed; the goal
# is under 10 s, printed, and over 60 s fails, as only a build would take that long), then from
# the venv: `python -m validator --help`, `python -m validator` on the fake array library
# (--fake-stage, the build's tests/python/stage: python.kw.* must pass), `dlpack-validate --help`
# and --version, and the CLI on the toy plugin (--plugin). The repaired wheel's own copy of the
# libraries it carries must be what its binaries load (ldd).
# Exit 77 (skipped) when build-wheel.sh cannot install its tools (no PyPI and nothing cached).
set -euo pipefail

SRC="" WORK="" BASE=/usr/bin/python3 PLUGIN="" FAKE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --source) SRC="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --base-python) BASE="$2"; shift 2 ;;
    --plugin) PLUGIN="$2"; shift 2 ;;
    --fake-stage) FAKE="$2"; shift 2 ;;
    *) echo "check_wheel.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$SRC" ] && [ -n "$WORK" ] || { echo "usage: $0 --source SRC --work DIR [--base-python PY] [--plugin LIB.so] [--fake-stage DIR]" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { "$BASE" -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }

CACHE="${DLPV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-validate}"
ROOT="$CACHE/wheel-test/$(printf '%s' "$SRC" | sha1sum | cut -c1-12)"
mkdir -p "$ROOT"
exec 9>"$ROOT/lock"
if ! flock -n 9; then echo "another install.wheel run on this checkout; waiting for it"; flock 9; fi

# ---- 1. the wheel, built once per source tree -------------------------------------------------
KEY=$("$BASE" - "$SRC" <<'PY'
import hashlib, os, subprocess, sys
src = sys.argv[1]
h = hashlib.sha256(sys.version.encode())
names = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       check=True, capture_output=True).stdout.split(b"\0")
for name in sorted(set(n for n in names if n)):
    path = os.path.join(src.encode(), name)
    if os.path.isfile(path) and not os.path.islink(path):
        h.update(name + b"\0")
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
print(h.hexdigest()[:16])
PY
)
WHEELS="$ROOT/wheel-$KEY"
if ls "$WHEELS"/dlpack_validate-*.whl >/dev/null 2>&1; then
  echo "wheel: the source tree is unchanged since $(basename "$(ls "$WHEELS"/*.whl)") was built ($WHEELS)"
else
  rm -rf "$WHEELS.part"
  t0=$(now)
  set +e
  # ccache in front of the compilers, one cache with install.pip's build: the settings are
  # check_pip.py's ccache_env (the build in the tree, build-wheel-test/ beside install.pip's
  # build-pip-test/, paths under the tree hashed relative to it: the two builds' commands hash
  # alike, from any clone); none without ccache
  mapfile -t CC_ENV < <("$BASE" -c 'import sys; sys.path.insert(0, sys.argv[1]); from check_pip import ccache_env
for k, v in ccache_env(sys.argv[2], sys.argv[3]).items(): print(f"{k}={v}")' "$(dirname "$0")" "$CACHE" "$SRC")
  env "${CC_ENV[@]}" DLPV_PYTHON="$BASE" DLPV_WHEEL_DIR="$WHEELS.part" DLPV_WHEEL_BUILD_DIR="$SRC/build-wheel-test" \
    bash "$SRC/scripts/build-wheel.sh"
  rc=$?
  set -e
  if [ $rc -eq 75 ]; then echo "SKIP: scripts/build-wheel.sh could not install its tools (no PyPI, nothing cached)"; exit 77; fi
  [ $rc -eq 0 ] || fail "scripts/build-wheel.sh: exit $rc"
  for old in "$ROOT"/wheel-*; do  # the wheels of earlier trees
    case "$old" in *.part) ;; *) rm -rf "$old" ;; esac
  done
  mv "$WHEELS.part" "$WHEELS"
  echo "wheel: built and repaired in $(secs "$t0" "$(now)") s"
fi
WHEEL="$(ls "$WHEELS"/dlpack_validate-*.whl)"
case "$(basename "$WHEEL")" in
  dlpack_validate-*-cp3*-cp3*-manylinux_2_*_x86_64.whl) echo "wheel: $(basename "$WHEEL")" ;;
  *) fail "$(basename "$WHEEL") is not a manylinux_2_X_x86_64 wheel for CPython" ;;
esac

# ---- 2. a fresh venv, a PATH without a compiler, pip install of the wheel ------------------------
rm -rf "$WORK"
mkdir -p "$WORK"
VENV="$WORK/venv"
"$BASE" -m venv "$VENV"
RUN=(env -i "HOME=$HOME" "PATH=$VENV/bin" "LANG=C.UTF-8" "PIP_CONFIG_FILE=/dev/null")
for tool in cc c++ gcc g++ clang clang++ cmake ld; do
  if "${RUN[@]}" /bin/bash -c "command -v $tool" >/dev/null; then fail "$tool is on the install's PATH"; fi
done
echo "PATH=$VENV/bin: no cc, c++, gcc, g++, clang, clang++, cmake or ld"
t0=$(now)
"${RUN[@]}" "$VENV/bin/python" -m pip install --no-index --no-deps --disable-pip-version-check "$WHEEL" \
  > "$WORK/pip-install.log" 2>&1 || { cat "$WORK/pip-install.log" >&2; fail "pip install of the wheel"; }
took=$(secs "$t0" "$(now)")
echo "pip install of the wheel: $took s (goal: under 10 s)"
if grep -q "Building wheel" "$WORK/pip-install.log"; then cat "$WORK/pip-install.log" >&2; fail "pip built something"; fi
"$BASE" -c 'import sys; sys.exit(float(sys.argv[1]) > 60)' "$took" || fail "pip install of a wheel took $took s"

# ---- 3. what was installed, run from the venv --------------------------------------------------
cd "$WORK"  # never the source tree: validator must come from the venv
where=$("${RUN[@]}" "$VENV/bin/python" -c 'import validator; print(validator.__file__)')
case "$where" in "$VENV"/*) ;; *) fail "validator imported from $where, not from the venv" ;; esac
MODULE=$(ls "$(dirname "$where")"/_dlpack_validate*.so)
# auditwheel moves an executable out of the wheel's scripts into <name>.scripts/, beside the
# libraries it copied in, and leaves in bin/ a Python launcher that execs it
CLI="$VENV/bin/dlpack-validate"
if [ "$(head -c 2 "$CLI")" = "#!" ]; then
  CLI="$(dirname "$where")/../dlpack_validate.scripts/dlpack-validate"
  [ -x "$CLI" ] || fail "bin/dlpack-validate is a script, and dlpack_validate.scripts/dlpack-validate is missing"
fi
for bin in "$MODULE" "$CLI"; do
  deps=$(ldd "$bin")
  if echo "$deps" | grep -q "not found"; then echo "$deps" >&2; fail "$bin: a library is not found"; fi
  # from outside the venv only what the manylinux policy lets a wheel assume; anything else
  # (Debian's libfmt) must be the copy auditwheel put into the wheel (dlpack_validate.libs/)
  outside=$(echo "$deps" | awk -v venv="$VENV/" '$2 == "=>" && index($3, venv) != 1 {print $1}' |
            grep -vE '^(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' || true)
  [ -z "$outside" ] || { echo "$deps" >&2; fail "$bin loads $outside from outside the venv"; }
done
echo "ldd: beyond libc, libm, libstdc++ and libgcc_s, the module and the CLI load only the wheel's own copies: $(ls "$VENV"/lib/python3*/site-packages/dlpack_validate.libs 2>/dev/null | tr '\n' ' ')"

"${RUN[@]}" "$VENV/bin/python" -m validator --help > help.txt || fail "python -m validator --help: exit $?"
grep -q "usage" help.txt || fail "python -m validator --help printed no usage"
"${RUN[@]}" "$VENV/bin/dlpack-validate" --help > cli-help.txt || fail "dlpack-validate --help: exit $?"
version=$("${RUN[@]}" "$VENV/bin/dlpack-validate" --version) || fail "dlpack-validate --version: exit $?"
echo "dlpack-validate --version: $version"
if [ -n "$FAKE" ]; then
  "${RUN[@]}" "PYTHONPATH=$FAKE" "$VENV/bin/python" -m validator fakearray.variants:correct \
    --filter 'python.kw.*' -q --json fake.json || fail "python -m validator fakearray: exit $?"
  "$BASE" - fake.json <<'PY' || fail "the fake's record"
import json, sys
rec = json.load(open(sys.argv[1]))
s, results = rec["summary"], rec["results"]
assert s["exit_code"] == 0 and results and all(r["id"].startswith("python.kw.") for r in results), s
print(f"python -m validator fakearray.variants:correct --filter 'python.kw.*': {s['total']} cases, {s['counts']}")
PY
fi
if [ -n "$PLUGIN" ]; then
  "${RUN[@]}" "$VENV/bin/dlpack-validate" "$PLUGIN" --filter 'producer.tensor.float32.*' -q \
    --json toy.json || fail "dlpack-validate $PLUGIN: exit $?"
  echo "dlpack-validate on $(basename "$PLUGIN"): exit 0"
fi
echo "ok: the repaired wheel installs without a compiler and runs"
