#!/usr/bin/env bash
# scripts/peers.sh: the pinned peer environment (peers/requirements.txt), made idempotently.
#
#   bash scripts/peers.sh            # prints the venv's python path on the last line
#
# A venv of its own, never the system interpreter's site-packages, under the cache folder
# ($DLPV_CACHE, default ~/.cache/dlpack-validate), named by a hash of the requirements, so
# that a changed pin makes a new venv and an unchanged one is reused as is. The interpreter is
# chosen deliberately: $DLPV_PEER_PYTHON, else Debian's /usr/bin/python3 (3.11; its venv
# module comes from python3-venv, which scripts/setup.sh installs). Binary wheels only: no
# package is ever compiled here, and torch==2.13.0 resolves to the CPU wheel this machine
# keeps on disk (a range that admits a newer torch would pull a CUDA build of several GB).
# The install time and the venv's size are recorded in the venv (dlpv-peers.json).
#
# Runs may start at once on one cache (two README commands, CI jobs): a lock file serialises
# the making, and a venv is filled beside its final name and renamed into place only once its
# stamp is written, so no run ever deletes or uses a venv another run is filling. A half-made
# one left by a killed run is removed under the lock. $DLPV_PEERS_REQUIREMENTS names another
# requirements file (the tests use a tiny one).
set -euo pipefail
cd "$(dirname "$0")/.."
REQ="${DLPV_PEERS_REQUIREMENTS:-peers/requirements.txt}"
BASE="${DLPV_PEER_PYTHON:-/usr/bin/python3}"
CACHE="${DLPV_CACHE:-$HOME/.cache/dlpack-validate}"
HASH=$( (cat "$REQ"; "$BASE" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
VENV="$CACHE/peers-$HASH"
STAMP="$VENV/dlpv-peers.json"

if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ]; then
  echo "peers: $VENV is ready ($(sed -n 's/.*"install_s": \([0-9.]*\).*/\1/p' "$STAMP") s to install)" >&2
  echo "$VENV/bin/python"
  exit 0
fi

mkdir -p "$CACHE"
exec 9>"$CACHE/peers.lock"
if ! flock -n 9; then
  echo "peers: another run is making the peers' venv; waiting for it" >&2
  flock 9
fi
if [ -f "$STAMP" ] && [ -x "$VENV/bin/python" ]; then  # the run we waited for made it
  echo "peers: $VENV is ready (made by another run)" >&2
  echo "$VENV/bin/python"
  exit 0
fi

PART="$VENV.part-$$"
echo "peers: creating $VENV from $BASE (filled in $PART, then renamed)" >&2
rm -rf "$PART" "$VENV".part-*  # half-made by killed runs: nobody else holds the lock
"$BASE" -m venv "$PART"
start=$(date +%s.%N)
export PIP_CACHE_DIR="$CACHE/pip"
"$PART/bin/python" -m pip install -qq --disable-pip-version-check --only-binary :all: -r "$REQ" >&2
end=$(date +%s.%N)
size_mib=$(du -sm "$PART" | cut -f1)
"$PART/bin/python" - "$PART/dlpv-peers.json" "$start" "$end" "$size_mib" <<'PY'
import json, sys, platform, importlib.metadata as md
stamp, start, end, size = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
pkgs = {d.metadata["Name"].lower(): d.version for d in md.distributions()}
json.dump({"python": platform.python_version(), "install_s": round(end - start, 1), "size_mib": size,
           "packages": dict(sorted(pkgs.items()))}, open(stamp, "w"), indent=1)
PY
rm -rf "$VENV"  # a stale one without its stamp (a killed run before the rename existed)
mv "$PART" "$VENV"
echo "peers: installed in $(sed -n 's/.*"install_s": \([0-9.]*\).*/\1/p' "$STAMP") s, ${size_mib} MiB" >&2
echo "$VENV/bin/python"
