#!/usr/bin/env bash
# scripts/run-main.sh: README command 1. Set up, build, then validate:
#   1. the bundled reference plugin (must pass: exit 0),
#   2. the real peers installed here: Debian's libtorch (C++ plugin) and, through the Python
#      shim, Debian's NumPy and PyTorch (`python -m validator numpy torch`),
#   3. the pinned DLPack 1.x peers (peers/requirements.txt, a venv made by scripts/peers.sh):
#      every library and every ordered pair of them, against baselines/peers (DLPV_PEERS=0
#      leaves this out where PyPI cannot be reached).
# The peers' verdicts are findings about those libraries, printed for reading; they do not
# change this script's exit status (see baselines/ for how a CI gate would accept them).
# Records go to build/*-run.json and HTML reports to build/*-run.html.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${DLPV_PEERS:-1}" != 0 ]; then
  DLPV_PEERS_PYTHON="$(bash scripts/peers.sh | tail -n 1)"
  DLPV_ONEAPI_PYTHON="$(bash scripts/oneapi.sh | tail -n 1)"  # dpnp on a SYCL device (kDLOneAPI)
  export DLPV_ONEAPI_PYTHON
else
  DLPV_PEERS_PYTHON=""
fi
export DLPV_PEERS_PYTHON
bash scripts/build.sh
BUILD="${DLPV_BUILD_DIR:-build}"
PY="${DLPV_PYTHON:-/usr/bin/python3}"

echo
echo "=== 1. dlpack-validate on the bundled reference plugin ==="
rm -f "$BUILD"/reference-run.json "$BUILD"/libtorch-run.json "$BUILD"/python-run.json "$BUILD"/peers-run.json \
  "$BUILD"/dpnp-run.json
RUNS=()
rc=0
"$BUILD/dlpack-validate" --json "$BUILD/reference-run.json" --html "$BUILD/reference-run.html" \
  "$BUILD/tests/libdlpv_reference.so" || rc=$?
RUNS+=("reference plugin=$BUILD/reference-run.json:$rc")

if [ -f "$BUILD/plugins/libtorch/libdlpv_libtorch.so" ]; then
  rc=0
  echo
  echo "=== 2. dlpack-validate on Debian's libtorch (at::toDLPack / at::fromDLPack) ==="
  "$BUILD/dlpack-validate" --json "$BUILD/libtorch-run.json" --html "$BUILD/libtorch-run.html" \
    "$BUILD/plugins/libtorch/libdlpv_libtorch.so" || rc=$?
  RUNS+=("Debian's libtorch=$BUILD/libtorch-run.json:$rc")
fi

if [ -d "$BUILD/python/validator" ]; then
  rc=0
  echo
  echo "=== 3. python -m validator numpy torch (Debian's NumPy and PyTorch, $PY) ==="
  PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m validator \
    --json "$BUILD/python-run.json" --html "$BUILD/python-run.html" numpy torch || rc=$?
  RUNS+=("Debian's numpy torch=$BUILD/python-run.json:$rc")
fi

if [ -n "$DLPV_PEERS_PYTHON" ] && [ -d "$BUILD/python/validator" ]; then
  rc=0
  echo
  echo "=== 4. python -m validator on the pinned DLPack 1.x peers ($DLPV_PEERS_PYTHON) ==="
  LIBS=(numpy torch jax paddle tvm_ffi pyarrow array_api_strict tensorflow mlx cupy)
  BASELINES=()
  for lib in "${LIBS[@]}"; do
    [ -f "baselines/peers/$lib.json" ] && BASELINES+=("baselines/peers/$lib.json")
  done
  "$PY" tools/merge_baselines.py "$BUILD/peers-baseline.json" "${BASELINES[@]}" baselines/peers/pairs.json
  PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" TF_CPP_MIN_LOG_LEVEL=3 "$DLPV_PEERS_PYTHON" \
    -m validator --baseline "$BUILD/peers-baseline.json" --json "$BUILD/peers-run.json" \
    --html "$BUILD/peers-run.html" --summary-md "$BUILD/peers-run.md" "${LIBS[@]}" || rc=$?
  RUNS+=("pinned 1.x peers=$BUILD/peers-run.json:$rc")
fi

if [ -n "${DLPV_ONEAPI_PYTHON:-}" ] && [ -d "$BUILD/python/validator" ]; then
  rc=0
  echo
  echo "=== 5. python -m validator dpnp: arrays on a SYCL device (kDLOneAPI), $DLPV_ONEAPI_PYTHON ==="
  DPNP_BASELINE=()
  [ -f baselines/peers/dpnp.json ] && DPNP_BASELINE=(--baseline baselines/peers/dpnp.json)
  PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" "$DLPV_ONEAPI_PYTHON" -m validator "${DPNP_BASELINE[@]}" \
    --json "$BUILD/dpnp-run.json" --html "$BUILD/dpnp-run.html" dpnp || rc=$?
  RUNS+=("dpnp (SYCL)=$BUILD/dpnp-run.json:$rc")
fi

# The last lines: each run's verdict, and the one that sets the exit status (the reference's).
"$PY" tools/run_summary.py --decides "reference plugin" "${RUNS[@]}"
