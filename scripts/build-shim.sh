#!/usr/bin/env bash
# scripts/build-shim.sh: build the Python shim (python -m validator) for any interpreter.
#
#   bash scripts/build-shim.sh PYTHON [BUILD_DIR]
#
# Configures BUILD_DIR (default build/shim-<python version>) with -DPython3_EXECUTABLE=PYTHON
# and builds only the extension module and the staged `validator` package; then
#   BUILD_DIR/python-validator PKG...      (= PYTHONPATH=BUILD_DIR/python PYTHON -m validator)
# runs it with that interpreter. PYTHON may be a venv's python: the module is built against the
# headers of the interpreter the venv was made from (Debian's python3-dev for /usr/bin/python3).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:?usage: build-shim.sh PYTHON [BUILD_DIR]}"
"$PY" -c 'import sys' 2>/dev/null || { echo "build-shim: '$PY' is not a working Python interpreter" >&2; exit 2; }
TAG=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
BUILD="${2:-build/shim-$TAG}"
bash scripts/setup.sh >&2
cmake -S . -B "$BUILD" -DPython3_EXECUTABLE="$PY" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target _dlpack_validate >&2
echo "$BUILD/python-validator"
