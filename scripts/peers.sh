#!/usr/bin/env bash
# scripts/peers.sh: the pinned peer environment (peers/requirements.txt), made idempotently.
#
#   bash scripts/peers.sh            # prints the venv's python path on the last line
#
# The venv is made by scripts/venvs.py, this project's one venv helper (its docstring has the
# rules: the cache folder $DLPV_CACHE, named by a hash of the requirements and the interpreter,
# made in place under a lock and stamped last, a half-made one removed, never used). Here: the
# interpreter is $DLPV_PEER_PYTHON, else Debian's /usr/bin/python3 (3.11; its venv module comes
# from python3-venv, which scripts/setup.sh installs); the installer is pip, which reads this
# machine's pip configuration (torch==2.13.0 resolves to the CPU wheel this machine keeps on
# disk; a range that admits a newer torch would pull a CUDA build of several GB). The install
# time, the size and the installed packages are in the venv's stamp (dlpv-peers.json).
# $DLPV_PEERS_REQUIREMENTS names another requirements file (the tests use a tiny one).
set -euo pipefail
cd "$(dirname "$0")/.."
REQ="${DLPV_PEERS_REQUIREMENTS:-peers/requirements.txt}"
BASE="${DLPV_PEER_PYTHON:-/usr/bin/python3}"
exec "$BASE" scripts/venvs.py python peers --requirements "$REQ" --base "$BASE" --stamp dlpv-peers.json --lock peers
