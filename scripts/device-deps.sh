#!/usr/bin/env bash
# scripts/device-deps.sh: copy the header-only dependencies (dlpack, fmt, CLI11, nlohmann_json,
# doctest) from this Debian machine's -dev packages into .deps/include (git-ignored), for a
# build on a machine that has none of them (the GPU machines: cmake -DDLPV_DEPS_DIR=$PWD/.deps).
# Installs the packages first if they are missing (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for h in /usr/include/dlpack/dlpack.h /usr/include/fmt/format.h /usr/include/CLI/CLI.hpp \
         /usr/include/nlohmann/json.hpp /usr/include/doctest/doctest.h; do
  [ -f "$h" ] || { bash scripts/setup.sh; break; }
done
rm -rf .deps
mkdir -p .deps/include
for d in dlpack fmt CLI nlohmann doctest; do
  cp -rL "/usr/include/$d" .deps/include/
done
du -sh .deps | sed 's/^/device-deps: /'
