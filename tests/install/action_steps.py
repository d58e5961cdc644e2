"""The composite action at the repository root (action.yml), read and run locally (CTest:
examples.action, tests/install/action_local.sh).

    action_steps.py ACTION check [--workflow WF]
        the rules that make the steps runnable outside GitHub: every `run:` step is named, runs
        in bash and holds no ${{ }} expression; the expressions in `env:`, `with:`, `if:` and
        the outputs are of the few forms `run` below evaluates; every input they name is
        declared, every step output they name is written by that step; every DLPV_* variable a
        script reads is in its step's env; the upload step runs whatever happened before it
        (always()); with --workflow, each action the action uses is pinned to the same ref as
        in that workflow (examples/github-actions/dlpack-validate.yml).
    action_steps.py ACTION shellcheck SHELLCHECK
        shellcheck on each `run:` script, as bash (GitHub runs them with bash -eo pipefail).
    action_steps.py ACTION run --workspace DIR --state DIR [--input NAME=VALUE]... --result FILE
        runs the action as a composite step would run on GitHub, in DIR: the inputs (declared
        defaults, then --input), each step's `if:`, `env:` with the expressions substituted, a
        fresh GITHUB_OUTPUT per step (its values become steps.ID.outputs), one
        GITHUB_STEP_SUMMARY per step (joined into STATE/job-summary.md, as the job's page
        shows them), GITHUB_ENV and GITHUB_PATH applied to the later steps, RUNNER_TEMP, and
        GITHUB_ACTION_PATH the folder of ACTION. `uses:` steps are not run: setup-python is
        played by the `python` on PATH; for upload-artifact the files its `path` names are
        listed (and must exist unless if-no-files-found allows it). Writes FILE (JSON): the
        conclusion, each step's outcome and exit status, the action's outputs and the uploads.
        Exit status 0 when the action succeeded, 1 when it failed.
    action_steps.py ACTION wheel BUILD_PYTHON PYPROJECT OUTDIR
        a stand-in for a dlpack-validate wheel: the package built in BUILD_PYTHON/validator,
        zipped as a wheel for this interpreter, at the version in PYPROJECT. Prints its path.

Needs PyYAML (the lint venv of tests/install/ci_example.sh has it), except for `wheel`, which runs
in the interpreter the wheel is for."""
import argparse
import base64
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import zipfile

EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
# The forms of expression the action may use, and `run` evaluates.
VALUE_FORMS = [re.compile(r"^inputs\.([A-Za-z0-9_-]+)$"),
               re.compile(r"^steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)$"),
               re.compile(r"^github\.action_path$")]
IF_TERM = re.compile(r"^(always\(\)|success\(\)|failure\(\)|inputs\.([A-Za-z0-9_-]+) (==|!=) '([^']*)')$")


def load(path):
    import yaml  # here, so that `wheel` runs in an interpreter without PyPI's packages
    with open(path) as f:
        action = yaml.safe_load(f)
    runs = action.get("runs") or {}
    if runs.get("using") != "composite":
        sys.exit(f"action_steps.py: {path} is not a composite action (runs.using)")
    return action, runs.get("steps") or []


def step_label(i, step):
    return f"step {i} ({step.get('name') or step.get('uses') or step.get('id')!r})"


def if_terms(cond):
    cond = str(cond).strip()
    if cond.startswith("${{") and cond.endswith("}}"):
        cond = cond[3:-2].strip()
    return [t.strip() for t in cond.split("&&")]


# ---- check -------------------------------------------------------------------------------------

def check(action_path, action, steps, args):
    problems = []
    inputs = action.get("inputs") or {}
    for name, spec in inputs.items():
        if not (spec or {}).get("description"):
            problems.append(f"input {name!r} has no description")
    ids = {}
    written = {}  # step id -> output names its script writes
    for i, step in enumerate(steps, 1):
        label = step_label(i, step)
        if "id" in step:
            ids[step["id"]] = i
        if "run" in step:
            script = str(step["run"])
            if not step.get("name"):
                problems.append(f"{label}: a run step without a name")
            if step.get("shell") != "bash":
                problems.append(f"{label}: shell is {step.get('shell')!r}, not bash")
            if "${{" in script:
                problems.append(f"{label}: the script holds a ${{{{ }}}} expression: pass it through env")
            if "working-directory" in step:
                problems.append(f"{label}: working-directory (the local run does not apply it)")
            env = step.get("env") or {}
            for var in sorted(set(re.findall(r"\$\{?(DLPV_[A-Z0-9_]+)", script))):
                if var not in env:
                    problems.append(f"{label}: the script reads ${var}, which its env does not set")
            if "id" in step:
                written[step["id"]] = set(re.findall(r'echo "([A-Za-z0-9_-]+)=', script))
        for where, value in list((step.get("env") or {}).items()) + list((step.get("with") or {}).items()):
            problems += check_value(f"{label}: {where}", value, inputs, ids, written)
        if "if" in step:
            for term in if_terms(step["if"]):
                m = IF_TERM.match(term)
                if not m:
                    problems.append(f"{label}: if: term {term!r} is not a form the local run evaluates")
                elif m.group(2) and m.group(2) not in inputs:
                    problems.append(f"{label}: if: names the undeclared input {m.group(2)!r}")
        uses = str(step.get("uses", ""))
        if uses.startswith("actions/upload-artifact@") and "always()" not in if_terms(step.get("if", "")):
            problems.append(f"{label}: the upload must run whatever happened before it (if: always())")
    for name, spec in (action.get("outputs") or {}).items():
        problems += check_value(f"output {name}", (spec or {}).get("value", ""), inputs, ids, written)
    if args.workflow:
        import yaml
        with open(args.workflow) as f:
            pins = {}
            for job in (yaml.safe_load(f).get("jobs") or {}).values():
                for step in job.get("steps") or []:
                    if "@" in str(step.get("uses", "")):
                        name, ref = step["uses"].split("@", 1)
                        pins[name] = ref
        for i, step in enumerate(steps, 1):
            if "@" in str(step.get("uses", "")):
                name, ref = step["uses"].split("@", 1)
                if name in pins and pins[name] != ref:
                    problems.append(f"{step_label(i, step)}: {name}@{ref}, but {args.workflow} uses @{pins[name]}")
                elif name not in pins:
                    problems.append(f"{step_label(i, step)}: {name} is not in {args.workflow}: nothing to compare its ref with")
    for p in problems:
        print(f"action_steps.py: {action_path}: {p}", file=sys.stderr)
    if problems:
        return 1
    runs = sum("run" in s for s in steps)
    print(f"ok: {os.path.basename(action_path)}: {len(steps)} steps ({runs} run steps, plain bash; "
          f"{len(steps) - runs} uses), {len(inputs)} inputs, {len(action.get('outputs') or {})} outputs")
    return 0


def check_value(where, value, inputs, ids, written):
    problems = []
    for expr in EXPR.findall(str(value)):
        m = next((f.match(expr) for f in VALUE_FORMS if f.match(expr)), None)
        if m is None:
            problems.append(f"{where}: the expression {expr!r} is not a form the local run evaluates")
        elif expr.startswith("inputs.") and m.group(1) not in inputs:
            problems.append(f"{where}: names the undeclared input {m.group(1)!r}")
        elif expr.startswith("steps."):
            sid, out = m.group(1), m.group(2)
            if sid not in ids:
                problems.append(f"{where}: names the step {sid!r}, which no step before it has as id")
            elif out not in written.get(sid, set()):
                problems.append(f"{where}: the step {sid!r} does not write the output {out!r}")
    return problems


# ---- shellcheck --------------------------------------------------------------------------------

def shellcheck(action_path, action, steps, args):
    text = open(action_path).read()
    bad = 0
    for i, step in enumerate(steps, 1):
        if "run" not in step:
            continue
        m = re.search(r"^\s*- name: " + re.escape(step["name"]) + r"\s*$", text, re.M)
        line = text.count("\n", 0, m.start()) + 1 if m else "?"
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write(step["run"])
            script = f.name
        try:
            r = subprocess.run([args.shellcheck, "--shell=bash", "--format=gcc", "--norc", script],
                               capture_output=True, text=True)
        finally:
            os.unlink(script)
        if r.returncode != 0:
            bad += 1
            print(f"shellcheck: {step_label(i, step)} (action.yml line {line}, lines below count from its script):")
            print(r.stdout.replace(script, "script") + r.stderr, end="")
    n = sum("run" in s for s in steps)
    if bad:
        print(f"shellcheck: findings in {bad} of {n} run steps", file=sys.stderr)
        return 1
    print(f"ok: shellcheck finds nothing in the {n} run steps of {os.path.basename(action_path)}")
    return 0


# ---- run ---------------------------------------------------------------------------------------

def read_kv_file(path):
    """KEY=VALUE lines and KEY<<DELIMITER blocks, as GitHub reads GITHUB_OUTPUT and GITHUB_ENV."""
    values = {}
    if not os.path.exists(path):
        return values
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            body = []
            while i < len(lines) and lines[i] != delim:
                body.append(lines[i])
                i += 1
            i += 1
            values[key] = "\n".join(body)
        elif "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
        else:
            raise SystemExit(f"action_steps.py: a line of {path} is neither KEY=VALUE nor KEY<<DELIM: {line!r}")
    return values


class Context:
    def __init__(self, action_path, inputs):
        self.action_dir = os.path.dirname(os.path.abspath(action_path))
        self.inputs = inputs
        self.outputs = {}  # step id -> {name: value}
        self.failed = False

    def value(self, expr):
        m = VALUE_FORMS[0].match(expr)
        if m:
            return self.inputs.get(m.group(1), "")
        m = VALUE_FORMS[1].match(expr)
        if m:
            return self.outputs.get(m.group(1), {}).get(m.group(2), "")
        if VALUE_FORMS[2].match(expr):
            return self.action_dir
        raise SystemExit(f"action_steps.py: cannot evaluate ${{{{ {expr} }}}}")

    def substitute(self, value):
        return EXPR.sub(lambda m: self.value(m.group(1)), str(value))

    def should_run(self, cond):
        if cond is None:
            return not self.failed
        status_given, result = False, True
        for term in if_terms(cond):
            m = IF_TERM.match(term)
            if not m:
                raise SystemExit(f"action_steps.py: cannot evaluate if: {cond!r}")
            if term == "always()":
                status_given = True
            elif term == "success()":
                status_given, result = True, result and not self.failed
            elif term == "failure()":
                status_given, result = True, result and self.failed
            else:
                equal = self.inputs.get(m.group(2), "") == m.group(4)
                result = result and (equal if m.group(3) == "==" else not equal)
        # GitHub adds success() to a condition that names no status function.
        return result and (status_given or not self.failed)


def run(action_path, action, steps, args):
    inputs = {name: str((spec or {}).get("default", "")) for name, spec in (action.get("inputs") or {}).items()}
    for kv in args.input:
        name, value = kv.split("=", 1)
        if name not in inputs:
            sys.exit(f"action_steps.py: the action has no input {name!r}")
        inputs[name] = value
    ctx = Context(action_path, inputs)
    state = os.path.abspath(args.state)
    os.makedirs(state, exist_ok=True)
    runner_temp = os.path.join(state, "runner-temp")
    os.makedirs(runner_temp, exist_ok=True)
    job_summary = os.path.join(state, "job-summary.md")
    open(job_summary, "w").close()
    github_env = os.path.join(state, "github-env")
    github_path = os.path.join(state, "github-path")
    open(github_env, "w").close()
    open(github_path, "w").close()
    base_env = dict(os.environ)
    base_env.update({"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": os.path.abspath(args.workspace),
                     "GITHUB_ACTION_PATH": ctx.action_dir, "RUNNER_TEMP": runner_temp,
                     "GITHUB_ENV": github_env, "GITHUB_PATH": github_path})
    record = {"inputs": inputs, "steps": [], "uploads": []}
    for i, step in enumerate(steps, 1):
        label = step.get("name") or step.get("uses")
        entry = {"name": label, "outcome": "skipped", "exit": None}
        record["steps"].append(entry)
        if not ctx.should_run(step.get("if")):
            print(f"--- {label}: skipped (if: {step.get('if', 'success()')})", flush=True)
            continue
        if "uses" in step:
            entry["outcome"] = "success"
            uses = str(step["uses"])
            if uses.startswith("actions/upload-artifact@"):
                with_ = {k: ctx.substitute(v) for k, v in (step.get("with") or {}).items()}
                files = []
                for line in with_.get("path", "").splitlines():
                    if line.strip():
                        pattern = os.path.join(args.workspace, line.strip())
                        matched = sorted(glob.glob(pattern))
                        for m in matched:
                            if os.path.isdir(m):
                                files += sorted(os.path.join(d, n) for d, _, ns in os.walk(m) for n in ns)
                            else:
                                files.append(m)
                rel = [os.path.relpath(f, args.workspace) for f in files]
                record["uploads"].append({"name": with_.get("name", ""), "files": rel})
                if not files and with_.get("if-no-files-found", "warn") == "error":
                    entry["outcome"] = "failure"
                    ctx.failed = True
                print(f"--- {label}: not run here; artifact {with_.get('name')!r} would hold "
                      f"{len(rel)} file(s): {' '.join(rel) or '(none: if-no-files-found ' + with_.get('if-no-files-found', 'warn') + ')'}", flush=True)
            else:
                print(f"--- {label}: not run here (the python on PATH plays its part)", flush=True)
            continue
        env = dict(base_env)
        env.update(read_kv_file(github_env))
        extra_path = [p for p in open(github_path).read().split("\n") if p]
        if extra_path:
            env["PATH"] = os.pathsep.join(reversed(extra_path)) + os.pathsep + env["PATH"]
        for key, value in (step.get("env") or {}).items():
            env[key] = ctx.substitute(value)
        out_file = os.path.join(state, f"output-{i}")
        step_summary = os.path.join(state, f"step-summary-{i}.md")
        open(out_file, "w").close()
        open(step_summary, "w").close()
        env["GITHUB_OUTPUT"] = out_file
        env["GITHUB_STEP_SUMMARY"] = step_summary
        script = os.path.join(runner_temp, f"step-{i}.sh")
        with open(script, "w") as f:
            f.write(step["run"])
        print(f"--- {label}", flush=True)
        rc = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                             env=env, cwd=args.workspace)
        entry["exit"] = rc
        entry["outcome"] = "success" if rc == 0 else "failure"
        if rc != 0:
            ctx.failed = True
            print(f"--- {label}: exit status {rc}", flush=True)
        if "id" in step:
            ctx.outputs[step["id"]] = read_kv_file(out_file)
        with open(job_summary, "a") as f:
            f.write(open(step_summary).read())
    record["outputs"] = {name: ctx.substitute((spec or {}).get("value", ""))
                         for name, spec in (action.get("outputs") or {}).items()}
    record["conclusion"] = "failure" if ctx.failed else "success"
    record["job_summary"] = job_summary
    with open(args.result, "w") as f:
        json.dump(record, f, indent=1)
    print(f"--- the action: {record['conclusion']}; outputs: "
          + ", ".join(f"{k}={v}" for k, v in record["outputs"].items()), flush=True)
    return 1 if ctx.failed else 0


# ---- wheel -------------------------------------------------------------------------------------

def wheel(action_path, action, steps, args):
    text = open(args.pyproject).read()
    name = re.search(r'^name = "([^"]+)"', text, re.M).group(1)
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    dist = name.replace("-", "_")
    py = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    tag = f"{py}-{py}-{sysconfig.get_platform().replace('-', '_').replace('.', '_')}"
    dist_info = f"{dist}-{version}.dist-info"
    files = []
    root = os.path.abspath(args.build_python)
    for folder, dirs, names in os.walk(os.path.join(root, "validator")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in sorted(names):
            path = os.path.join(folder, n)
            with open(path, "rb") as f:
                files.append((os.path.relpath(path, root), f.read()))
    if not any(n.endswith(".so") for n, _ in files):
        sys.exit(f"action_steps.py: no compiled module in {root}/validator (build _dlpack_validate)")
    files.append((f"{dist_info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()))
    files.append((f"{dist_info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: tests/install/action_steps.py\n"
                  f"Root-Is-Purelib: false\nTag: {tag}\n".encode()))
    record = []
    for arcname, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    os.makedirs(args.outdir, exist_ok=True)
    out = os.path.join(args.outdir, f"{dist}-{version}-{tag}.whl")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files:
            z.writestr(arcname, data)
    print(out)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action")
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--workflow")
    s = sub.add_parser("shellcheck")
    s.add_argument("shellcheck")
    r = sub.add_parser("run")
    r.add_argument("--workspace", required=True)
    r.add_argument("--state", required=True)
    r.add_argument("--input", action="append", default=[])
    r.add_argument("--result", required=True)
    w = sub.add_parser("wheel")
    w.add_argument("build_python")
    w.add_argument("pyproject")
    w.add_argument("outdir")
    args = ap.parse_args()
    action, steps = load(args.action) if args.command != "wheel" else (None, None)
    return {"check": check, "shellcheck": shellcheck, "run": run, "wheel": wheel}[args.command](
        args.action, action, steps, args)


if __name__ == "__main__":
    sys.exit(main())
