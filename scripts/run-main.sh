#!/usr/bin/env bash
# scripts/run-main.sh: README command 1. Set up, build, validate the bundled reference
# plugin and print its summary; the JSON record goes to build/reference-run.json.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
BUILD="${DLPV_BUILD_DIR:-build}"
echo
echo "=== dlpack-validate on the bundled reference plugin ==="
"$BUILD/dlpack-validate" --json "$BUILD/reference-run.json" "$BUILD/tests/libdlpv_reference.so"
