#!/usr/bin/env bash
# scripts/device-run.sh: on a GPU machine (cmake, a compiler and pip's pybind11 present, no
# Debian -dev packages), build against .deps (scripts/device-deps.sh, carried along) and run
# the CUDA cases for real: the reference plugin and every mutant through CTest (so the CUDA
# mutants are proven on a GPU, not only on the emulated driver), then the Python shim on the
# modern peers on CPU and CUDA. Everything it writes goes under ${OUT:-out-device}.
#   DLPV_PYTHON   interpreter with the peers (default: python3 on PATH, chosen on purpose here:
#                 the GPU machines have no Debian python3-numpy/torch)
#   DLPV_PEERS    packages for python -m validator (default: "torch cupy jax numpy")
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-out-device}"
mkdir -p "$OUT"
PY="${DLPV_PYTHON:-$(command -v python3)}"
BUILD=build-device
{ nvidia-smi -L; "$PY" --version; } > "$OUT/machine.txt" 2>&1
if ! cmake -S . -B "$BUILD" -DDLPV_DEPS_DIR="$PWD/.deps" -DPython3_EXECUTABLE="$PY" \
      -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir 2>/dev/null)" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      > "$OUT/configure.log" 2>&1; then
  echo "configure with the Python shim failed (see configure.log); retrying without it"
  rm -rf "$BUILD"
  cmake -S . -B "$BUILD" -DDLPV_DEPS_DIR="$PWD/.deps" -DPython3_EXECUTABLE="$PY" -DDLPV_BUILD_PYTHON_SHIM=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$OUT/configure_noshim.log" 2>&1 || { tail -30 "$OUT/configure_noshim.log"; exit 2; }
fi
cmake --build "$BUILD" -j "$(nproc)" > "$OUT/build.log" 2>&1 || { grep -m20 -E "error" "$OUT/build.log"; exit 2; }
V="$BUILD/dlpack-validate"
"$V" "$BUILD/tests/libdlpv_reference.so" --filter 'device.*' --filter 'stream.*' \
     --json "$OUT/reference_cuda.json" > "$OUT/reference_cuda.txt" 2>&1
tail -25 "$OUT/reference_cuda.txt"
# The reference and every mutant (e2e.reference + e2e.mutant.*; the emulated runs are skipped:
# they prove the same rules against the model, this proves them against the GPU).
(cd "$BUILD" && ctest -j 8 -R '^e2e\.(reference|mutant\.)' --output-on-failure) > "$OUT/ctest_gpu.txt" 2>&1
grep -E "tests passed|UNVERIFIED|PROBLEM" "$OUT/ctest_gpu.txt" | head -40
for peer in ${DLPV_PEERS:-torch cupy jax numpy}; do
  PYTHONPATH="$BUILD/python" "$PY" -m validator "$peer" --json "$OUT/py_$peer.json" \
      > "$OUT/py_$peer.txt" 2>&1
  echo "== python -m validator $peer: exit $?"; grep -E "^subject|verdict|pass [0-9]" "$OUT/py_$peer.txt" | head -5
done
PYTHONPATH="$BUILD/python" "$PY" -m validator ${DLPV_PEERS:-torch cupy jax numpy} --json "$OUT/py_all.json" \
    > "$OUT/py_all.txt" 2>&1
echo "== all peers together: exit $?"; tail -5 "$OUT/py_all.txt"
PYTHONPATH="$BUILD/python" "$PY" -m validator bench ${DLPV_PEERS:-torch cupy jax numpy} > "$OUT/bench.txt" 2>&1
tail -30 "$OUT/bench.txt"
