#!/usr/bin/env bash
# scripts/setup.sh: install the Debian packages dlpack-validate builds and tests with.
# Idempotent: asks apt only for what is missing. Needs root (or sudo) on Debian 12.
set -euo pipefail

PKGS=(
  build-essential cmake pkg-config file clang libclang-rt-14-dev
  libdlpack-dev doctest-dev libcli11-dev libfmt-dev nlohmann-json3-dev
  pybind11-dev python3-dev python3-pytest python3-venv
  python3-numpy python3-torch libtorch-dev
  chromium libxml2-utils ocl-icd-libopencl1 ccache
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PKGS[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
