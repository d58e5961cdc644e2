#!/usr/bin/env bash
# scripts/numpy-main.sh: NumPy's main branch built from the local git mirrors, in a venv of its
# own, with the validator installed beside it, made idempotently.
#
#   bash scripts/numpy-main.sh       # prints the venv's python path on the last line
#   "$(bash scripts/numpy-main.sh | tail -n1)" -m validator numpy --json out.json -q
#
# Nothing is cloned or fetched from git hosts: the NumPy tree and its submodules come from the
# mirrors under $DLPV_MIRRORS (default /work/.mirror, laid out as OWNER+NAME/repo), exported
# with `git archive`. NumPy's commit is the mirror's HEAD unless $NUMPY_MAIN_COMMIT names one.
# For each submodule the commit NumPy pins is used when the mirror holds it; when it does not,
# the newest earlier pin of that submodule in NumPy's history that the mirror does hold is used
# instead, and the substitution is written to SOURCES.txt in the source tree and announced.
# Exception: when SVML's pin is missing, the substitute's files are exported (the wheel's
# metadata names its LICENSE) but SVML is disabled with NumPy's own `disable-svml` option, so
# none of the substitute's code is compiled. The MathJax docs submodule is never needed.
# When the vendored Meson had to be substituted by an older one, NumPy's meson.build minimum
# Meson version is lowered to that version in the copy (recorded in SOURCES.txt).
#
# Layout under the cache folder ($DLPV_CACHE, default ~/.cache/dlpack-validate), SHORT being
# the first 12 hex digits of NumPy's commit:
#   numpy-main-src-SHORT/         the assembled source tree (stamp: .dlpv-assembled)
#   numpy-main-SHORT-py312/       the venv (stamp: dlpv-numpy-main.json, written last)
# A rerun with both stamps present only prints the python path. A run that stopped part way
# resumes: the source tree is reassembled unless stamped, the venv is reused, and NumPy's meson
# build folder (numpy-main-src-SHORT/.build) is kept so that finished compiles are not redone.
#
# Heavy steps run under `nice -n 15` with two compile jobs at most ($DLPV_JOBS). Exit status 75
# with a one-line reason when a prerequisite (interpreter, mirror, commit) is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO_ROOT=$(pwd)

BASE="${DLPV_NUMPY_MAIN_PYTHON:-/root/.pyenv/versions/3.12.1/bin/python3.12}"
CACHE="$(/usr/bin/python3 scripts/venvs.py root)"  # $DLPV_CACHE, else $XDG_CACHE_HOME/dlpack-validate (scripts/venvs.py)
MIRRORS="${DLPV_MIRRORS:-/work/.mirror}"
JOBS="${DLPV_JOBS:-2}"
NICE=(nice -n 15)

missing() {  # a prerequisite is absent: one line, exit 75
  echo "numpy-main: missing prerequisite: $*" >&2
  exit 75
}

# Wall-clock timing of each step, kept to be written into the stamp.
TIMINGS=()
step_start() { STEP_NAME=$1; STEP_T0=$(date +%s.%N); echo "numpy-main: step '$1' ..." >&2; }
step_end() {
  local secs
  secs=$(awk -v a="$STEP_T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  TIMINGS+=("$STEP_NAME=$secs")
  echo "$(date -u +%FT%TZ) $STEP_NAME $secs" >> "$TIMING_LOG"
  echo "numpy-main: step '$STEP_NAME' took $secs s" >&2
}

# --- prerequisites -------------------------------------------------------------------------
[ -x "$BASE" ] || missing "interpreter $BASE not found (set DLPV_NUMPY_MAIN_PYTHON)"
"$BASE" -c 'import sys; sys.exit(sys.version_info < (3, 12))' \
  || missing "$BASE is older than Python 3.12, which NumPy main requires"
command -v git >/dev/null || missing "git not found"
NP_MIRROR="$MIRRORS/numpy+numpy/repo"
[ -d "$NP_MIRROR" ] || missing "NumPy mirror $NP_MIRROR not found"
NP_COMMIT=$(git -C "$NP_MIRROR" rev-parse --verify -q "${NUMPY_MAIN_COMMIT:-HEAD}^{commit}") \
  || missing "commit ${NUMPY_MAIN_COMMIT:-HEAD} not in $NP_MIRROR"
SHORT=${NP_COMMIT:0:12}
SRC="$CACHE/numpy-main-src-$SHORT"
# The venv and NumPy's build tools (and the validator's own build requirements, pinned in
# pyproject.toml, for step 4) come from scripts/venvs.py, the project's one venv helper; NumPy is
# then built into it (step 3).
mapfile -t VALIDATOR_REQS < <(sed -n 's/^requires *= *\[\(.*\)\]/\1/p' "$REPO_ROOT/pyproject.toml" | grep -o '"[^"]*"' | tr -d '"')
TOOL_ARGS=(--req "meson-python>=0.20" --req "Cython>=3.1" --req ninja)
for r in "${VALIDATOR_REQS[@]}"; do TOOL_ARGS+=(--req "$r"); done
VENV="$("$BASE" scripts/venvs.py path "numpy-main-$SHORT-py312" "${TOOL_ARGS[@]}" --base "$BASE")"
SRC_STAMP="$SRC/.dlpv-assembled"
TIMING_LOG="$CACHE/numpy-main-$SHORT.timings"  # every step's wall seconds, all runs
STAMP="$VENV/dlpv-numpy-main.json"
# The validator in the venv must be this checkout's: a marker names the tree it was built from
# (the content of every file git tracks or would track), and a changed tree rebuilds it,
# incrementally, in a build folder kept in the cache.
# Only what the wheel is built from counts (not docs, tests, tools, baselines or the atlas).
TREE=$(cd "$REPO_ROOT" && git ls-files -z --cached --others --exclude-standard -- \
         CMakeLists.txt pyproject.toml cmake common harness include subjects cases reports app validator python_shim |
       xargs -0 -r sha256sum 2>/dev/null | sha256sum | cut -c1-16)
VALIDATOR_MARK="$VENV/.dlpv-validator-$TREE"

if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ] && [ -f "$VALIDATOR_MARK" ]; then
  echo "numpy-main: $VENV is ready (NumPy $SHORT, the validator of this checkout)" >&2
  echo "$VENV/bin/python"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/numpy-main.lock"
if ! flock -n 9; then
  echo "numpy-main: another run holds $CACHE/numpy-main.lock; waiting for it" >&2
  flock 9
fi
if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ] && [ -f "$VALIDATOR_MARK" ]; then  # the run we waited for
  echo "$VENV/bin/python"
  exit 0
fi

# The mirror folder for each submodule path NumPy needs (the docs' MathJax is left out).
declare -A SUB_MIRROR=(
  [vendored-meson/meson]=numpy+meson
  [numpy/_core/src/highway]=google+highway
  [numpy/fft/pocketfft]=mreineck+pocketfft
  [numpy/_core/src/common/pythoncapi-compat]=python+pythoncapi-compat
  [numpy/_core/src/npysort/x86-simd-sort]=intel+x86-simd-sort
  [numpy/_core/src/umath/svml]=numpy+SVML
)
# Submodules that are disabled by a NumPy build option, instead of substituted, when their pin
# is missing from the mirror.
declare -A SUB_DISABLE=(
  [numpy/_core/src/umath/svml]=-Ddisable-svml=true
)

has_commit() { git -C "$1" cat-file -e "$2^{commit}" 2>/dev/null; }

# Echoes "COMMIT KIND" for one submodule path: KIND is pinned, substitute or disabled.
resolve_sub() {
  local path=$1 mirror="$MIRRORS/${SUB_MIRROR[$1]}/repo" pin c old
  [ -d "$mirror" ] || missing "mirror $mirror for $path not found"
  pin=$(git -C "$NP_MIRROR" ls-tree "$NP_COMMIT" "$path" | awk '{print $3}')
  [ -n "$pin" ] || missing "$path is not a submodule at NumPy $SHORT"
  if has_commit "$mirror" "$pin"; then echo "$pin pinned"; return; fi
  # Walk back through the commits that changed this pin, newest first.
  for c in $(git -C "$NP_MIRROR" log --format=%H "$NP_COMMIT" -- "$path"); do
    old=$(git -C "$NP_MIRROR" ls-tree "$c" "$path" | awk '{print $3}')
    if [ -n "$old" ] && has_commit "$mirror" "$old"; then
      if [ -n "${SUB_DISABLE[$path]:-}" ]; then echo "$old disabled"; else echo "$old substitute"; fi
      return
    fi
  done
  missing "no pin of $path in NumPy's history is held by $mirror (wanted $pin)"
}

# --- step 1: the source tree ---------------------------------------------------------------
SETUP_ARGS=()
if [ -f "$SRC_STAMP" ]; then
  echo "numpy-main: source tree $SRC is assembled" >&2
  while read -r arg; do SETUP_ARGS+=("$arg"); done < <(sed -n 's/^setup-arg //p' "$SRC/SOURCES.txt")
else
  step_start assemble
  PART="$SRC.part-$$"
  rm -rf "$PART" "$SRC".part-*
  mkdir -p "$PART"
  {
    echo "numpy $NP_COMMIT pinned ($(git -C "$NP_MIRROR" log -1 --format=%ci "$NP_COMMIT"))"
  } > "$PART/SOURCES.txt.tmp"
  git -C "$NP_MIRROR" archive "$NP_COMMIT" | tar -x -C "$PART"
  for path in "${!SUB_MIRROR[@]}"; do
    read -r commit kind < <(resolve_sub "$path")
    mirror="$MIRRORS/${SUB_MIRROR[$path]}/repo"
    wanted=$(git -C "$NP_MIRROR" ls-tree "$NP_COMMIT" "$path" | awk '{print $3}')
    case $kind in
      disabled)
        # Its files are still exported (NumPy's wheel metadata lists its LICENSE), but none of
        # its code is compiled.
        echo "numpy-main: $path: pinned $wanted is not in the mirror; disabled (${SUB_DISABLE[$path]}), files of $commit exported" >&2
        echo "$path $commit substitute for $wanted, DISABLED by ${SUB_DISABLE[$path]} ($(git -C "$mirror" log -1 --format=%ci "$commit"))" \
          >> "$PART/SOURCES.txt.tmp"
        echo "setup-arg ${SUB_DISABLE[$path]}" >> "$PART/SOURCES.txt.tmp" ;;
      substitute)
        echo "numpy-main: $path: pinned $wanted is not in the mirror; SUBSTITUTE $commit" >&2
        echo "$path $commit substitute for $wanted ($(git -C "$mirror" log -1 --format=%ci "$commit"))" \
          >> "$PART/SOURCES.txt.tmp" ;;
      pinned)
        echo "$path $commit pinned ($(git -C "$mirror" log -1 --format=%ci "$commit"))" >> "$PART/SOURCES.txt.tmp" ;;
    esac
    mkdir -p "$PART/$path"
    git -C "$mirror" archive "$commit" | tar -x -C "$PART/$path"
  done
  # An older substitute Meson refuses NumPy's minimum version: lower it in this copy only.
  meson_py_ver=$(sed -n "s/^version = '\(.*\)'/\1/p" "$PART/vendored-meson/meson/mesonbuild/coredata.py")
  need_ver=$(sed -n "s/.*meson_version: '>=\([0-9.]*\)'.*/\1/p" "$PART/meson.build" | head -n1)
  if [ -n "$meson_py_ver" ] && [ -n "$need_ver" ] \
     && [ "$(printf '%s\n%s\n' "$meson_py_ver" "$need_ver" | sort -V | head -n1)" != "$need_ver" ]; then
    sed -i "s/meson_version: '>=$need_ver'/meson_version: '>=$meson_py_ver'/" "$PART/meson.build"
    echo "numpy-main: vendored Meson is $meson_py_ver < $need_ver: meson.build's minimum lowered in the copy" >&2
    echo "patch meson.build meson_version >=$need_ver lowered to >=$meson_py_ver (vendored Meson substitute)" \
      >> "$PART/SOURCES.txt.tmp"
  fi
  mv "$PART/SOURCES.txt.tmp" "$PART/SOURCES.txt"
  rm -rf "$SRC"
  mv "$PART" "$SRC"
  date -u +%FT%TZ > "$SRC_STAMP"
  while read -r arg; do SETUP_ARGS+=("$arg"); done < <(sed -n 's/^setup-arg //p' "$SRC/SOURCES.txt")
  step_end
fi
cat "$SRC/SOURCES.txt" >&2

# --- step 2: the venv and NumPy's build tools ---------------------------------------------
export PIP_CACHE_DIR="$CACHE/pip"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check)
step_start venv-and-build-tools
"$BASE" scripts/venvs.py python "numpy-main-$SHORT-py312" "${TOOL_ARGS[@]}" --base "$BASE" >&2
step_end

# --- step 3: NumPy itself ------------------------------------------------------------------
# No build isolation: the tools above are used; meson itself is the vendored copy. The meson
# build folder sits in the source tree so that an interrupted build resumes.
if [ -f "$VENV/.dlpv-numpy-built-$SHORT" ] && "$VENV/bin/python" -c "import numpy" 2>/dev/null; then
  echo "numpy-main: NumPy $SHORT already installed in $VENV" >&2
else
  step_start numpy-build
  cfg=(-Cbuild-dir="$SRC/.build" -Ccompile-args=-j"$JOBS")
  for a in "${SETUP_ARGS[@]}"; do cfg+=("-Csetup-args=$a"); done
  "${NICE[@]}" "${PIP[@]}" install --no-build-isolation --no-deps -v "${cfg[@]}" "$SRC" >&2
  touch "$VENV/.dlpv-numpy-built-$SHORT"
  step_end
fi

# --- step 4: the validator, for this interpreter --------------------------------------------
if [ ! -f "$VALIDATOR_MARK" ]; then
  step_start validator-build
  CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "${NICE[@]}" "${PIP[@]}" install -q --no-deps --force-reinstall \
    --no-build-isolation --config-settings=build-dir="$CACHE/numpy-main-validator-build" "$REPO_ROOT" >&2 \
    || CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" "${NICE[@]}" "${PIP[@]}" install -q --no-deps --force-reinstall "$REPO_ROOT" >&2
  rm -f "$VENV"/.dlpv-validator-*
  touch "$VALIDATOR_MARK"
  step_end
fi

# --- step 5: ml_dtypes (binary wheel; it must keep the NumPy built above) --------------------
step_start ml_dtypes
"${PIP[@]}" install -q --only-binary :all: ml_dtypes >&2
"$VENV/bin/python" - "$SHORT" <<'PY'
import sys, numpy
if not numpy.__version__.startswith("2.6.0.dev"):
    sys.exit(f"numpy-main: NumPy was replaced by {numpy.__version__} ({numpy.__file__})")
PY
step_end

# --- the stamp, written last ---------------------------------------------------------------
"$VENV/bin/python" - "$STAMP" "$NP_COMMIT" "$SRC/SOURCES.txt" "${TIMINGS[@]}" <<'PY'
import json, sys, platform, importlib.metadata as md
stamp, commit, sources, *timings = sys.argv[1:]
import numpy
info = {
    "python": platform.python_version(),
    "numpy": numpy.__version__,
    "numpy_commit": commit,
    "has_register_dlpack_dtype": hasattr(numpy.dtypes, "register_dlpack_dtype"),
    "sources": open(sources).read().splitlines(),
    "timings_s": {k: float(v) for k, v in (t.split("=", 1) for t in timings)},
    "packages": {d.metadata["Name"].lower(): d.version for d in md.distributions()},
}
with open(stamp + ".tmp", "w") as f:
    json.dump(info, f, indent=1, sort_keys=True)
import os
os.replace(stamp + ".tmp", stamp)
PY
echo "numpy-main: $VENV is ready" >&2
echo "$VENV/bin/python"
