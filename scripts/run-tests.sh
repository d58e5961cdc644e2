#!/usr/bin/env bash
# scripts/run-tests.sh: README command 2 (and what .ci/run calls). Set up, build, run every
# test with CTest, the pinned DLPack 1.x peers (tests/peers) included.
# The peers' venv comes from PyPI (scripts/peers.sh, cached); DLPV_PEERS=0 leaves the peers
# out (no PyPI): the run then says so and tests only the reference, mutants and Debian's peers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${DLPV_PEERS:-1}" != 0 ]; then
  DLPV_PEERS_PYTHON="$(bash scripts/peers.sh | tail -n 1)"
  DLPV_ONEAPI_PYTHON="$(bash scripts/oneapi.sh | tail -n 1)"  # dpnp on a SYCL device (kDLOneAPI)
  # Packages in generic mode (peers/generic-requirements.txt: awkward, ndonnx, warp, onnxruntime)
  DLPV_GENERIC_PYTHON="$(DLPV_PEERS_REQUIREMENTS=peers/generic-requirements.txt bash scripts/peers.sh | tail -n 1)"
  export DLPV_ONEAPI_PYTHON DLPV_GENERIC_PYTHON
  export DLPV_PEERS_PYTHON
else
  echo "run-tests: DLPV_PEERS=0, the pinned peers (tests/peers) are not tested" >&2
  export DLPV_PEERS_PYTHON="" DLPV_GENERIC_PYTHON=""
fi
bash scripts/build.sh
BUILD="${DLPV_BUILD_DIR:-build}"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
