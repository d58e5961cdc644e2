#!/usr/bin/env python3
"""tests/python/check_options.py: one options table, three front-ends. Every row of
validator.options() appears in `dlpack-validate --help` (or `bench --help` for bench-only
rows) and in `python -m validator --help` (`bench --help`, `report --help`) with the same help
text, every keyword row is a validator.run keyword, and a bad value is refused by the same
check with the same words on both command lines and through validator.run. Every report
format (validator.formats()) is an option the pytest plugin offers and an output of action.yml."""
import argparse
import os
import re
import subprocess
import sys


def flat(text):
    return re.sub(r"\s+", " ", text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    args = ap.parse_args()
    import validator
    problems = []
    table = validator.options()
    py = [sys.executable, "-m", "validator"]
    helps = {
        ("cli", "run"): subprocess.run([args.validator, "--help"], capture_output=True, text=True).stdout,
        ("cli", "bench"): subprocess.run([args.validator, "bench", "--help"], capture_output=True, text=True).stdout,
    }
    for cmd in ("run", "bench", "report"):
        argv = py + ([] if cmd == "run" else [cmd]) + ["--help"]
        helps[("py", cmd)] = subprocess.run(argv, capture_output=True, text=True).stdout
    for o in table:
        cli_help = helps[("cli", "bench" if o["commands"] == ["bench"] else "run")]
        if o["flag"] not in cli_help:
            problems.append(f"{o['flag']}: not in dlpack-validate's help")
        # CLI11 and argparse wrap differently: compare with whitespace folded.
        if flat(o["help"])[:60] not in flat(cli_help):
            problems.append(f"{o['flag']}: the CLI's help text is not the table's")
        for cmd in o["commands"]:
            if cmd == "pytest":  # the plugin's --dlpack-validate-* options: python.pytest_plugin
                continue
            if o["flag"] not in helps[("py", cmd)]:
                problems.append(f"{o['flag']}: not in python -m validator {cmd} --help")
            elif flat(o["help"])[:60] not in flat(helps[("py", cmd)]):
                problems.append(f"{o['flag']}: python -m validator {cmd}'s help text is not the table's")
    # A bad value: the same words from all three.
    bad = {"timeout": "abc", "isolate": "bogus"}
    for name, value in bad.items():
        row = next(o for o in table if o["name"] == name)
        c = subprocess.run([args.validator, row["flag"], value, "x.so"], capture_output=True, text=True)
        p = subprocess.run(py + [row["flag"], value, "numpy"], capture_output=True, text=True)
        words = f"'{value}' is not"
        for who, proc in (("dlpack-validate", c), ("python -m validator", p)):
            if proc.returncode != 2 or words not in proc.stderr:
                problems.append(f"{who} {row['flag']} {value}: exit {proc.returncode}, {proc.stderr.strip()!r}")
        try:
            validator.run(["numpy"], **{row["keyword"]: value})
            problems.append(f"validator.run({row['keyword']}={value!r}): no BadInput")
        except validator.BadInput as e:
            if words not in str(e) or row["keyword"] not in str(e):
                problems.append(f"validator.run({row['keyword']}={value!r}): {e}")
    # A single-valued option given twice is bad input on both command lines, in the same words
    # (never the last kept and the first dropped).
    for o in table:
        if o["type"] in ("flag", "globs") or "run" not in o["commands"]:
            continue
        value = {"shard": "1/2", "choice": "worker"}.get(o["type"], "1")
        c = subprocess.run([args.validator, "x.so", o["flag"], value, o["flag"], value], capture_output=True, text=True)
        p = subprocess.run(py + ["numpy", o["flag"], value, o["flag"], value], capture_output=True, text=True)
        words = f"{o['flag']} given 2 times (once at most)"
        for who, proc in (("dlpack-validate", c), ("python -m validator", p)):
            if proc.returncode != 2 or words not in proc.stderr:
                problems.append(f"{who} {o['flag']} twice: exit {proc.returncode}, {proc.stderr.strip()!r}")
    # The users' page names every option (docs/usage.md, docs/bench.md for bench's own).
    here = os.path.dirname(os.path.abspath(__file__))
    docs = "".join(open(os.path.join(here, "..", "..", "docs", f)).read() for f in ("usage.md", "bench.md"))
    for o in table:
        if o["flag"] not in docs:
            problems.append(f"{o['flag']}: not in docs/usage.md or docs/bench.md")
    # An option of runs given to bench is refused by both command lines (exit 2), never ignored.
    for o in table:
        if "bench" in o["commands"] or "run" not in o["commands"]:
            continue
        value = {"flag": [], "shard": ["1/2"], "globs": ["x*"]}.get(o["type"], ["1"])  # a value runs take
        for argv in ([args.validator, "bench", "x.so", o["flag"]] + value, py + ["bench", "numpy", o["flag"]] + value):
            rc = subprocess.run(argv, capture_output=True, text=True).returncode
            if rc != 2:
                problems.append(f"{' '.join(argv[-3:])}: bench took a run option (exit {rc}, expected 2)")
    # The report formats: one option each, offered by the pytest plugin, and an output of the
    # Action named as the option (action.yml must declare its outputs; its run step iterates
    # validator.formats()).
    action = open(os.path.join(here, "..", "..", "action.yml")).read()
    outputs = action[action.index("\noutputs:"):action.index("\nruns:")]
    names = {o["name"]: o for o in table}
    for f in validator.formats():
        o = names.get(f["option"])
        if o is None or "pytest" not in o["commands"]:
            problems.append(f"report format {f['option']}: no option of the table offered by the pytest plugin")
            continue
        if f"\n  {o['flag'][2:]}:" not in outputs:
            problems.append(f"report format {f['option']}: action.yml has no output '{o['flag'][2:]}'")
    try:
        validator.run(["numpy"], no_such_option=1)
        problems.append("validator.run(no_such_option=1): accepted")
    except TypeError:
        pass
    for p in problems:
        print("FAIL:", p)
    print(f"{len(table)} options checked in 3 front-ends; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
