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
  # Libraries whose pins cannot share a venv (the library table's `own` rows: MindSpore, MXNet):
  # one venv each from peers/NAME-requirements.txt, passed on as NAME=PYTHON;... (tests/own).
  DLPV_OWN_PYTHONS=""
  for name in $(awk -F'\t' '$4 == "own" { print $1 }' python_shim/validator/libraries.tsv); do
    py="$(DLPV_PEERS_REQUIREMENTS="peers/$name-requirements.txt" bash scripts/peers.sh | tail -n 1)"
    DLPV_OWN_PYTHONS="${DLPV_OWN_PYTHONS:+$DLPV_OWN_PYTHONS;}$name=$py"
  done
  export DLPV_ONEAPI_PYTHON DLPV_GENERIC_PYTHON DLPV_OWN_PYTHONS
  export DLPV_PEERS_PYTHON
else
  echo "run-tests: DLPV_PEERS=0, the pinned peers (tests/peers) are not tested" >&2
  export DLPV_PEERS_PYTHON="" DLPV_GENERIC_PYTHON="" DLPV_OWN_PYTHONS=""
fi
bash scripts/build.sh
BUILD="${DLPV_BUILD_DIR:-build}"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
