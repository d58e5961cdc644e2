#!/usr/bin/env bash
# scripts/build.sh: set up (scripts/setup.sh) and build into ./build.
# The Python interpreter is chosen deliberately: $DLPV_PYTHON if set, else /usr/bin/python3
# (Debian's, where python3-numpy and python3-torch live) - never whatever python3 is on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY="${DLPV_PYTHON:-/usr/bin/python3}"
BUILD="${DLPV_BUILD_DIR:-build}"
# $DLPV_PEERS_PYTHON (the pinned peers' venv python, scripts/peers.sh) adds the tests/peers
# gate, $DLPV_ONEAPI_PYTHON (scripts/oneapi.sh's python-oneapi) the oneAPI peer's,
# $DLPV_GENERIC_PYTHON (peers/generic-requirements.txt's venv) the generic-mode gate,
# $DLPV_OWN_PYTHONS (NAME=PYTHON;...: a venv per library, peers/NAME-requirements.txt) their
# adapters' tests (tests/own); an empty value leaves each out.
# ccache (Debian's, scripts/setup.sh) in front of the compilers, its cache beside the venvs' under
# ~/.cache/dlpack-validate (a CI runner keeps it as it keeps them): paths are hashed relative to
# this checkout (base_dir) and the working directory not at all, so a fresh clone elsewhere
# compiles only what changed. DLPV_CCACHE=0 builds without it (a cold build).
LAUNCHERS=()
if [ "${DLPV_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null; then
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/dlpack-validate/ccache}" CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  LAUNCHERS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
else
  LAUNCHERS=(-DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
fi
cmake -S . -B "$BUILD" -DPython3_EXECUTABLE="$PY" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${LAUNCHERS[@]}" \
  -DDLPV_PEERS_PYTHON="${DLPV_PEERS_PYTHON:-}" -DDLPV_ONEAPI_PYTHON="${DLPV_ONEAPI_PYTHON:-}" \
  -DDLPV_GENERIC_PYTHON="${DLPV_GENERIC_PYTHON:-}" -DDLPV_OWN_PYTHONS="${DLPV_OWN_PYTHONS:-}" >/dev/null
# The build's own output goes to $BUILD/build.log; the terminal gets its progress every 10 %
# and every line that is not a progress line (warnings, errors), so that what follows the build
# (a verdict) is not buried under hundreds of "Building CXX object" lines.
mkdir -p "$BUILD"
echo "build: cmake --build $BUILD -j $(nproc) (full output in $BUILD/build.log)"
cmake --build "$BUILD" -j "$(nproc)" 2>&1 | tee "$BUILD/build.log" | awk '
  /^\[ *[0-9]+%\] / { p = substr($0, 2, index($0, "%") - 2) + 0
                      if (p >= next_p) { print "build: " p " %"; fflush(); next_p = p - p % 10 + 10 }
                      next }
  /^(gmake|make)(\[[0-9]+\])?: (Entering|Leaving) directory/ { next }
  { print; fflush() }'
echo "build: done"
