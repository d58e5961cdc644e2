#!/usr/bin/env bash
# scripts/device-run.sh: on a GPU machine (cmake, a compiler and pip's pybind11 present, no
# Debian -dev packages), build against .deps (scripts/device-deps.sh, carried along) and run
# the CUDA cases for real: the reference plugin and every mutant through CTest (so the CUDA
# mutants are proven on a GPU, not only on the emulated driver), then the Python shim on the
# modern peers on CPU and CUDA. Everything it writes goes under ${OUT:-out-device}.
# Every step has its own time limit, so one slow step cannot use up a short device lease.
#   DLPV_PYTHON        interpreter with the peers (default: python3 on PATH, chosen on purpose
#                      here: the GPU machines have no Debian python3-numpy/torch)
#   DLPV_PEERS         packages for python -m validator (default: "torch cupy jax numpy")
#   DLPV_DEVICE_STEPS  which steps to run (default: "build reference ctest peers together bench")
#   DLPV_STEP_LIMIT    seconds for one step (default 240; the build gets twice that)
#   DLPV_PEER_ARGS     extra arguments for every python -m validator run
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out-device}"
mkdir -p "$OUT"
PY="${DLPV_PYTHON:-$(command -v python3)}"
BUILD=build-device
STEPS=" ${DLPV_DEVICE_STEPS:-build reference ctest peers together bench} "
LIMIT="${DLPV_STEP_LIMIT:-240}"
PEERS="${DLPV_PEERS:-torch cupy jax numpy}"
# JAX takes 75% of the GPU's memory in every process that imports it unless told not to; the
# validator's workers are several processes, so each allocates on demand instead.
export XLA_PYTHON_CLIENT_PREALLOCATE=false
step() { [[ "$STEPS" == *" $1 "* ]]; }
stamp() { echo "[$(date +%T)] $*"; }
{ nvidia-smi -L; "$PY" --version; "$PY" -c 'import numpy, torch; print("numpy", numpy.__version__, "torch", torch.__version__)'; } \
  > "$OUT/machine.txt" 2>&1
if step build; then
  stamp build
  if ! timeout $((LIMIT * 2)) cmake -S . -B "$BUILD" -DDLPV_DEPS_DIR="$PWD/.deps" -DPython3_EXECUTABLE="$PY" \
        -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir 2>/dev/null)" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        > "$OUT/configure.log" 2>&1; then
    echo "configure with the Python shim failed (see configure.log); retrying without it"
    rm -rf "$BUILD"
    cmake -S . -B "$BUILD" -DDLPV_DEPS_DIR="$PWD/.deps" -DPython3_EXECUTABLE="$PY" -DDLPV_BUILD_PYTHON_SHIM=OFF \
          -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$OUT/configure_noshim.log" 2>&1 || { tail -30 "$OUT/configure_noshim.log"; exit 2; }
  fi
  timeout $((LIMIT * 2)) cmake --build "$BUILD" -j "$(nproc)" > "$OUT/build.log" 2>&1 || { grep -m20 -E "error" "$OUT/build.log"; exit 2; }
fi
V="$BUILD/dlpack-validate"
if step reference; then
  stamp reference
  timeout "$LIMIT" "$V" "$BUILD/tests/libdlpv_reference.so" --filter 'device.*' --filter 'stream.*' \
       --json "$OUT/reference_cuda.json" > "$OUT/reference_cuda.txt" 2>&1
  echo "reference (device.* stream.*): exit $?"; tail -25 "$OUT/reference_cuda.txt"
fi
if step ctest; then
  stamp ctest
  # The reference and every mutant (e2e.reference + e2e.mutant.*; the emulated runs are
  # skipped: they prove the same rules against the model, this proves them against the GPU).
  # Four at a time: sixteen validator runs at once on one H100 made no progress for over two
  # minutes (2026-11-24), while each alone takes about 2 s.
  (cd "$BUILD" && timeout "$LIMIT" ctest -j 4 --timeout 60 -R '^e2e\.(reference|mutant\.)' --output-on-failure) \
      > "$OUT/ctest_gpu.txt" 2>&1
  echo "ctest: exit $?"; grep -E "tests passed|UNVERIFIED|PROBLEM|Failed|\*\*\*" "$OUT/ctest_gpu.txt" | head -40
fi
if step peers; then
  for peer in $PEERS; do
    stamp "peer $peer"
    PYTHONPATH="$BUILD/python" timeout "$LIMIT" "$PY" -m validator "$peer" ${DLPV_PEER_ARGS:-} \
        --json "$OUT/py_$peer.json" > "$OUT/py_$peer.txt" 2>&1
    echo "== python -m validator $peer: exit $?"; tail -4 "$OUT/py_$peer.txt"
  done
fi
if step together; then
  stamp together
  PYTHONPATH="$BUILD/python" timeout "$LIMIT" "$PY" -m validator $PEERS ${DLPV_PEER_ARGS:-} --json "$OUT/py_all.json" \
      > "$OUT/py_all.txt" 2>&1
  echo "== all peers together: exit $?"; tail -5 "$OUT/py_all.txt"
fi
if step bench; then
  stamp bench
  PYTHONPATH="$BUILD/python" timeout "$LIMIT" "$PY" -m validator bench $PEERS > "$OUT/bench.txt" 2>&1
  tail -30 "$OUT/bench.txt"
fi
stamp done
