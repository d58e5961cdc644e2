#!/usr/bin/env bash
# scripts/run-tests.sh: README command 2 (and what .ci/run calls). Set up, build, run every
# test with CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD="${DLPV_BUILD_DIR:-build}"
ctest --test-dir "$BUILD" --output-on-failure -j "$(nproc)"
