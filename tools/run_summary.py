#!/usr/bin/env python3
"""tools/run_summary.py: the last lines of README command 1 (scripts/run-main.sh): one line per
run with its verdict, and one line saying which run set the exit status and what it is.

  tools/run_summary.py --decides LABEL LABEL=RECORD.json[:EXIT] ...

Each LABEL=RECORD names a run and its JSON record (a missing or unreadable record is shown as
such, with the exit status the run gave, when :EXIT follows). --decides names the run whose exit
status is the script's; the others are findings for reading. Prints; exits with the deciding
run's status (2 when its record cannot be read and no exit status was given)."""
import argparse
import json
import sys


def verdict_of(path, rc):
    try:
        with open(path, encoding="utf-8") as f:
            s = json.load(f)["summary"]
    except (OSError, ValueError, KeyError, TypeError):
        return (f"no record ({path})" + (f", exit {rc}" if rc is not None else "")), (2 if rc is None else rc)
    counts = s.get("counts") or {}
    shown = ", ".join(f"{n} {k}" for k, n in counts.items() if n and k != "pass")
    code = int(s.get("exit_code", 1))
    word = str(s.get("verdict") or ("pass" if code == 0 else "fail")).upper()
    text = f"{word}: {counts.get('pass', 0)} pass" + (f", {shown}" if shown else "")
    text += f"; {s.get('unexpected', 0)} unexpected" if s.get("unexpected") else ""
    return text, code


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decides", required=True, help="the label of the run that sets the exit status")
    ap.add_argument("runs", nargs="+", help="LABEL=RECORD.json[:EXIT]")
    a = ap.parse_args()
    rows, decided = [], None
    for spec in a.runs:
        label, _, rest = spec.partition("=")
        path, rc = rest, None
        if ":" in rest and rest.rsplit(":", 1)[1].isdigit():
            path, rc = rest.rsplit(":", 1)[0], int(rest.rsplit(":", 1)[1])
        text, code = verdict_of(path, rc)
        rows.append((label, text, code))
        if label == a.decides:
            decided = (label, text, code)
    if decided is None:
        print(f"run_summary: --decides {a.decides} names none of the runs", file=sys.stderr)
        return 2
    width = max(len(r[0]) for r in rows)
    print("\n=== what this run decided ===")
    for label, text, _ in rows:
        role = "sets the exit status" if label == a.decides else "findings about that library, for reading"
        print(f"  {label:<{width}}  {text}  ({role})")
    label, text, code = decided
    print(f"command 1: exit {code}, set by {label} ({text.split(':')[0]}); the other runs' verdicts do not change it")
    return code


if __name__ == "__main__":
    sys.exit(main())
