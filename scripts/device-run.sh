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
#   DLPV_DEVICE_TAR    if set, a .tgz of everything under $OUT is rewritten there after each
#                      step (the device tool returns at most 8 files: this one always comes back)
# Steps beyond the defaults: kw06 (the validator's KW-06 case on torch next to its confirmation
# script, and the installed torch's own __dlpack__ source) and stall (N reference runs of the
# device and stream cases at once, N = 1, 8, 16, each timed, with a process snapshot if slow)
# and jobs (bench/jobs_scaling.py: the matrix of $DLPV_PEERS at -j 1, 2, 4, 8, 16, one round,
# with every status compared with -j 1's; and the reference plugin's run the same way).
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
step() { snap; [[ "$STEPS" == *" $1 "* ]]; }
snap() { [ -z "${DLPV_DEVICE_TAR:-}" ] || tar czf "$DLPV_DEVICE_TAR" -C "$OUT" . 2>/dev/null || true; }
trap snap EXIT
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
  # minutes (2026-11-24), while each alone takes about 2 s. On an H200 (2026-11-27) sixteen
  # reference runs of the device and stream cases at once took 7.1 s (the stall step).
  # -FS identity_records: each mutant runs itself here (no identity.capture, whose runs the
  # proof tests otherwise judge: tests/e2e/check_run.py --from-capture).
  (cd "$BUILD" && timeout "$LIMIT" ctest -j 4 --timeout 60 -R '^e2e\.(reference|mutant\.)' -FS identity_records \
      --output-on-failure) \
      > "$OUT/ctest_gpu.txt" 2>&1
  echo "ctest: exit $?"; grep -E "tests passed|UNVERIFIED|PROBLEM|Failed|\*\*\*" "$OUT/ctest_gpu.txt" | head -40
fi
if step kw06; then
  stamp kw06
  "$PY" -c 'import inspect, torch; print(torch.__version__); print(inspect.getsource(torch.Tensor.__dlpack__))' \
      > "$OUT/torch_dlpack_source.txt" 2>&1
  for i in 1 2; do
    PYTHONPATH="$BUILD/python" timeout 120 "$PY" -m validator torch --filter 'stream.producer.copy_on_stream*' -v \
        --json "$OUT/kw06_validator_$i.json" > "$OUT/kw06_validator_$i.txt" 2>&1
    echo "== validator KW-06 try $i: exit $?"; grep -E "copy_on_stream|KW-06" "$OUT/kw06_validator_$i.txt" | head -8
  done
  for i in 1 2; do
    (cd peers/confirm && timeout 60 "$PY" cuda_copy_off_stream.py torch) > "$OUT/kw06_script_$i.txt" 2>&1
    echo "== script KW-06 try $i: exit $?"; tail -3 "$OUT/kw06_script_$i.txt"
  done
fi
if step stall; then
  for n in 1 8 16; do
    stamp "stall: $n at once"
    t0=$(date +%s.%N)
    for i in $(seq "$n"); do
      ( s=$(date +%s.%N); timeout 75 "$V" "$BUILD/tests/libdlpv_reference.so" --filter 'device.*' --filter 'stream.*' \
          --json "$OUT/stall_${n}_$i.json" > "$OUT/stall_${n}_$i.txt" 2>&1
        echo "run $i: exit $? in $(awk "BEGIN{print $(date +%s.%N) - $s}") s" >> "$OUT/stall_$n.txt" ) &
    done
    for _ in $(seq 20); do [ "$(jobs -r | wc -l)" -gt 0 ] || break; sleep 1; done
    if [ "$(jobs -r | wc -l)" -gt 0 ]; then
      { echo "after 20 s:"; ps -eo pid,ppid,stat,etime,time,wchan:32,args | grep -E "dlpack-validat[e]"; nvidia-smi; } \
        > "$OUT/stall_${n}_snapshot.txt" 2>&1
    fi
    wait
    echo "== $n at once: $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"; sort -t' ' -k2n "$OUT/stall_$n.txt" | tr '\n' ';'; echo
  done
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
if step jobs; then
  stamp jobs
  timeout "$LIMIT" "$PY" bench/jobs_scaling.py --python "$PY" --pythonpath "$BUILD/python" --libs $PEERS \
      --jobs 1 2 4 8 16 --json "$OUT/jobs_matrix.json" > "$OUT/jobs_matrix.txt" 2>&1
  echo "== jobs scaling, matrix of $PEERS: exit $?"; tail -8 "$OUT/jobs_matrix.txt"
  timeout "$LIMIT" "$PY" bench/jobs_scaling.py --validator "$BUILD/dlpack-validate" \
      --plugin "$BUILD/tests/libdlpv_reference.so" --jobs 1 2 4 8 16 --rounds 3 \
      --json "$OUT/jobs_reference.json" > "$OUT/jobs_reference.txt" 2>&1
  echo "== jobs scaling, reference plugin: exit $?"; tail -8 "$OUT/jobs_reference.txt"
fi
if step bench; then
  stamp bench
  PYTHONPATH="$BUILD/python" timeout "$LIMIT" "$PY" -m validator bench $PEERS > "$OUT/bench.txt" 2>&1
  tail -30 "$OUT/bench.txt"
fi
stamp done
