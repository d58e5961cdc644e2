"""The `run:` steps of a GitHub Actions workflow, for running them locally (examples.ci_workflow).

    steps.py WORKFLOW check --run NAME... --skip NAME=WHY...
        every `run:` step must be named exactly once, as run here or as skipped (with the reason);
        run steps must be plain bash: no ${{ }} expression, shell bash (defaults or the step's own),
        no step-level env or working-directory (nothing the local run would leave out)
    steps.py WORKFLOW run NAME [--set KEY=VALUE]... [--expect RC]
        runs one step's script as GitHub does (bash --noprofile --norc -eo pipefail FILE) in the
        current folder, with the workflow's and the job's env, then the --set overrides
    steps.py WORKFLOW uploads
        prints the paths of the actions/upload-artifact steps, one a line

Needs PyYAML. The workflow is read as YAML 1.1 does: its `on:` key is the boolean True."""
import argparse
import os
import subprocess
import sys
import tempfile

import yaml


def load(path):
    with open(path) as f:
        wf = yaml.safe_load(f)
    jobs = wf.get("jobs") or {}
    if len(jobs) != 1:
        sys.exit(f"steps.py: expected one job in {path}, found {len(jobs)}")
    (job_id, job), = jobs.items()
    return wf, job_id, job


def run_steps(job):
    steps = {}
    for i, step in enumerate(job.get("steps") or [], 1):
        if "run" in step:
            name = step.get("name")
            if not name:
                sys.exit(f"steps.py: run step {i} has no name (the test refers to steps by name)")
            if name in steps:
                sys.exit(f"steps.py: two run steps are named {name!r}")
            steps[name] = step
    return steps


def shell_of(wf, job, step):
    return (step.get("shell") or ((job.get("defaults") or {}).get("run") or {}).get("shell")
            or ((wf.get("defaults") or {}).get("run") or {}).get("shell"))


def check(wf, job, args):
    steps = run_steps(job)
    skip = dict(s.split("=", 1) for s in args.skip)
    problems = []
    for name in args.run:
        if name in skip:
            problems.append(f"{name!r} is both run and skipped")
    for name in list(args.run) + list(skip):
        if name not in steps:
            problems.append(f"the test names a run step {name!r} that the workflow does not have")
    for name, step in steps.items():
        if name not in args.run and name not in skip:
            problems.append(f"run step {name!r} is neither run nor skipped by the test: say which")
        if name in args.run:
            if "${{" in step["run"]:
                problems.append(f"run step {name!r} uses a ${{{{ }}}} expression: not plain bash")
            if shell_of(wf, job, step) != "bash":
                problems.append(f"run step {name!r} does not run in bash (set defaults.run.shell)")
            for key in ("env", "working-directory"):
                if key in step:
                    problems.append(f"run step {name!r} has its own {key}: the local run would differ")
    for p in problems:
        print(f"steps.py: {p}", file=sys.stderr)
    if problems:
        return 1
    for name in args.run:
        print(f"run locally: {name}")
    for name, why in skip.items():
        print(f"skipped:     {name} ({why})")
    return 0


def run(wf, job, args):
    step = run_steps(job).get(args.name)
    if step is None:
        sys.exit(f"steps.py: no run step named {args.name!r}")
    env = dict(os.environ)
    for scope in (wf.get("env") or {}, job.get("env") or {}):
        for key, value in scope.items():
            value = str(value)
            if "${{" in value:
                sys.exit(f"steps.py: env {key} is an expression: give it with --set")
            env[key] = value
    for kv in args.set:
        key, value = kv.split("=", 1)
        env[key] = value
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write(step["run"])
        script = f.name
    try:
        print(f"--- step {args.name!r} ---", flush=True)
        rc = subprocess.call(["bash", "--noprofile", "--norc", "-eo", "pipefail", script], env=env)
    finally:
        os.unlink(script)
    print(f"--- step {args.name!r}: exit status {rc} ---", flush=True)
    if args.expect is not None and rc != args.expect:
        print(f"steps.py: step {args.name!r} exited {rc}, expected {args.expect}", file=sys.stderr)
        return 1
    return 0 if args.expect is not None else rc


def uploads(wf, job, args):
    found = False
    for step in job.get("steps") or []:
        if str(step.get("uses", "")).startswith("actions/upload-artifact@"):
            found = True
            if step.get("if") != "always()":
                print("steps.py: the upload step must run whatever the gate said (if: always())",
                      file=sys.stderr)
                return 1
            for line in str((step.get("with") or {}).get("path", "")).splitlines():
                if line.strip():
                    print(line.strip())
    if not found:
        print("steps.py: no actions/upload-artifact step", file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workflow")
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("--run", nargs="*", default=[])
    c.add_argument("--skip", nargs="*", default=[])
    r = sub.add_parser("run")
    r.add_argument("name")
    r.add_argument("--set", action="append", default=[])
    r.add_argument("--expect", type=int)
    sub.add_parser("uploads")
    args = ap.parse_args()
    wf, _, job = load(args.workflow)
    return {"check": check, "run": run, "uploads": uploads}[args.command](wf, job, args)


if __name__ == "__main__":
    sys.exit(main())
