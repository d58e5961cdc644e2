#!/usr/bin/env bash
# tests/install/peers_concurrent.sh: two runs of scripts/peers.sh started at once on one empty
# cache (a tiny requirements file, so the venv is made in seconds) must both succeed and name the
# same venv, which must work; half-made venvs left by killed runs (one without its stamp, and one
# of the older fill-beside-and-rename policy, .part-PID) are cleaned up, never used.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
: > "$T/requirements.txt"
export DLPV_CACHE="$T/cache" DLPV_PEERS_REQUIREMENTS="$T/requirements.txt"
mkdir -p "$DLPV_CACHE"
# A half-made venv of a killed run (pid 1 is never ours), and one without its stamp.
HASH=$( (cat "$T/requirements.txt"; "${DLPV_PEER_PYTHON:-/usr/bin/python3}" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
mkdir -p "$DLPV_CACHE/peers-$HASH.part-1/lib" "$DLPV_CACHE/peers-$HASH/lib"
bash "$ROOT/scripts/peers.sh" > "$T/a.out" 2> "$T/a.err" &
a=$!
bash "$ROOT/scripts/peers.sh" > "$T/b.out" 2> "$T/b.err" &
b=$!
rc=0
wait $a || { echo "first run failed:"; cat "$T/a.err"; rc=1; }
wait $b || { echo "second run failed:"; cat "$T/b.err"; rc=1; }
[ $rc = 0 ] || exit 1
pa=$(tail -1 "$T/a.out"); pb=$(tail -1 "$T/b.out")
[ "$pa" = "$pb" ] || { echo "the runs name different venvs: $pa vs $pb"; exit 1; }
"$pa" -c 'import sys, pip; assert sys.prefix != sys.base_prefix' || { echo "the venv does not work: $pa"; exit 1; }
[ -f "$(dirname "$(dirname "$pa")")/dlpv-peers.json" ] || { echo "no stamp in the venv"; exit 1; }
if ls -d "$DLPV_CACHE"/peers-*.part-* > /dev/null 2>&1; then echo "a half-made venv was left: $(ls -d "$DLPV_CACHE"/peers-*.part-*)"; exit 1; fi
cat "$T/a.err" "$T/b.err"
echo "ok: both runs got $pa"
