#!/usr/bin/env bash
# scripts/oneapi.sh: the oneAPI peer (peers/oneapi-requirements.txt: dpctl, dpnp and Intel's
# OpenCL CPU runtime), made idempotently, and an interpreter that finds its SYCL device.
#
#   bash scripts/oneapi.sh           # prints the wrapper's path on the last line
#
# The venv is made as the peers' venv is (scripts/peers.sh: cached under $DLPV_CACHE, named by
# a hash of the requirements, under the same lock, binary wheels only). Beside its python this
# writes bin/python-oneapi, which sets what the SYCL runtime needs and runs the venv's python:
#   LD_LIBRARY_PATH     the venv's lib/ (the runtime's shared libraries live there)
#   OCL_ICD_FILENAMES   the venv's libintelocl.so (the OpenCL loader, Debian's
#                       ocl-icd-libopencl1 from scripts/setup.sh, then finds the CPU runtime)
#   ONEAPI_DEVICE_SELECTOR  opencl:cpu unless already set
# Then it asks dpctl for the SYCL devices and says plainly when there is none (the dpnp cases
# then skip, quoting why).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$(DLPV_PEERS_REQUIREMENTS=peers/oneapi-requirements.txt bash scripts/peers.sh | tail -n 1)"
VENV="$(dirname "$(dirname "$PY")")"
ICD="$(ls "$VENV"/lib/libintelocl.so* 2>/dev/null | grep -v -e '-gdb.py$' | sort | head -n 1 || true)"
WRAP="$VENV/bin/python-oneapi"
cat > "$WRAP.part" <<SH
#!/bin/sh
# Written by scripts/oneapi.sh: the oneAPI peer's python with its SYCL runtime in reach.
export LD_LIBRARY_PATH="$VENV/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export OCL_ICD_FILENAMES="\${OCL_ICD_FILENAMES:-$ICD}"
export ONEAPI_DEVICE_SELECTOR="\${ONEAPI_DEVICE_SELECTOR:-opencl:cpu}"
exec "$PY" "\$@"
SH
chmod +x "$WRAP.part"
mv "$WRAP.part" "$WRAP"
# Opt-in layering for the cross-device pairs (tests/peers: peers.oneapi_matrix): with
# DLPV_LAYER_SITE set to another venv's site-packages (the peers': NumPy, torch, JAX), that
# folder comes after this venv's own, so dpnp and its NumPy stay first. Unset, nothing changes.
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo 'import os, sys; p = os.environ.get("DLPV_LAYER_SITE"); p and p not in sys.path and sys.path.append(p)' > "$SITE/dlpv_layer.pth"
if [ -z "$ICD" ]; then
  echo "oneapi: no libintelocl.so in $VENV/lib: intel-opencl-rt did not install its runtime; dpnp will find no SYCL device" >&2
fi
if devices="$("$WRAP" -c 'import dpctl; print("; ".join(d.name + " (" + str(d.backend).split(".")[-1] + ", " + str(d.device_type).split(".")[-1] + ")" for d in dpctl.get_devices()))' 2>&1)" \
   && [ -n "$devices" ]; then
  echo "oneapi: SYCL device(s): $devices" >&2
else
  echo "oneapi: no SYCL device found (dpctl.get_devices() is empty or failed: ${devices:-no output}); the dpnp cases will skip, saying so" >&2
fi
echo "$WRAP"
