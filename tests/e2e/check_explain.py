#!/usr/bin/env python3
"""tests/e2e/check_explain.py: `explain ID` on both front ends.

  - a requirement id, in any case (cap-03 as CAP-03): its text, strength with the verdict a
    breach gets, its source, what a breach looks like, the cases that test it; exit 0;
  - a case id: its description, its requirements, the command that runs it alone; exit 0;
  - an unknown id: one line on stderr naming the closest ids, nothing on stdout, exit 2;
  - the text summary of a run with a finding ends with how to explain an id;
  - the HTML report's requirement links lead to a file that exists (run from the build tree:
    the source tree's docs/requirements.md); a copy of the validator outside the build tree
    (no published URL configured) links nowhere and shows the explain command instead.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import urllib.parse


def run(cmd, *args):
    return subprocess.run(cmd + list(args), capture_output=True, text=True, errors="replace")


def check_front(name, cmd, requirement, case, case_needles, unknown, closest, problems):
    p = run(cmd, "explain", requirement.lower())
    if p.returncode != 0:
        problems.append(f"{name}: explain {requirement.lower()}: exit {p.returncode} {p.stderr[-300:]!r}")
    else:
        for needle in (requirement.upper() + " ·", "strength:", "a breach is a", "source (as the requirement table",
                       "what a breach looks like", "cases that test it", ".".join(case.split(".")[:2])):
            if needle not in p.stdout:
                problems.append(f"{name}: explain {requirement}: no {needle!r} in\n{p.stdout}")
    p = run(cmd, "explain", case)
    if p.returncode != 0:
        problems.append(f"{name}: explain {case}: exit {p.returncode} {p.stderr[-300:]!r}")
    else:
        for needle in ["case " + case, "requirements it tests:", "run it alone: "] + case_needles:
            if needle not in p.stdout:
                problems.append(f"{name}: explain {case}: no {needle!r} in\n{p.stdout}")
        alone = next((l.split(": ", 1)[1] for l in p.stdout.splitlines() if l.startswith("run it alone: ")), "")
        if not alone.endswith("--filter " + case):
            problems.append(f"{name}: explain {case}: the command to run it alone is {alone!r}")
    p = run(cmd, "explain", unknown)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    if p.returncode != 2 or len(lines) != 1 or closest not in lines[0] or p.stdout.strip():
        problems.append(f"{name}: explain {unknown}: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout[:200]!r} "
                        f"(expected exit 2 and one line naming {closest})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--mutant", required=True, help="a plugin with a finding (its summary's footer)")
    ap.add_argument("--python-validator", default="", help="build/python-validator, when the shim is built")
    a = ap.parse_args()
    problems = []
    cli = [a.validator]
    check_front("dlpack-validate", cli, "LAYOUT-08", "consumer.byte_offset.versioned",
                ["LAYOUT-08 · MUST", "--filter consumer.byte_offset.versioned"], "LAYOUT-88", "LAYOUT-08", problems)
    p = run(cli, "explain", "consumer.byte_ofset.versioned")
    if p.returncode != 2 or "consumer.byte_offset.versioned" not in p.stderr:
        problems.append(f"dlpack-validate: a mistyped case id: exit {p.returncode} {p.stderr!r}")
    p = run(cli, a.mutant, "--filter", "consumer.byte_offset.*")
    footer = next((l for l in p.stdout.splitlines() if l.startswith("explain a requirement or a case: ")), "")
    if p.returncode != 1 or not footer.endswith(" explain ID"):
        problems.append(f"the summary of a run with a finding does not say how to explain an id (exit {p.returncode}):\n"
                        + p.stdout[-1500:])
    else:
        q = subprocess.run(shlex.split(footer.split(": ", 1)[1][:-len(" ID")]) + ["LAYOUT-08"], capture_output=True,
                           text=True)
        if q.returncode != 0 or "LAYOUT-08 ·" not in q.stdout:
            problems.append(f"the summary's explain command does not run: {footer!r} (exit {q.returncode})")
    with tempfile.TemporaryDirectory() as tmp:
        html = os.path.join(tmp, "run.html")
        run(cli, a.mutant, "--filter", "consumer.byte_offset.*", "--html", html)
        links = set(re.findall(r'href="([^"#]+)#(?:layout|del)-\d+"', open(html, encoding="utf-8").read()))
        for link in links:
            u = urllib.parse.urlparse(link)
            if u.scheme == "file" and not os.path.exists(urllib.parse.unquote(u.path)):
                problems.append(f"HTML: a requirement link to a file that does not exist: {link}")
            elif u.scheme not in ("file", "http", "https"):
                problems.append(f"HTML: a requirement link relative to the report: {link}")
        if not links:
            problems.append("HTML: no requirement link from a validator run in its build tree")
        copy = os.path.join(tmp, "dlpack-validate")
        shutil.copy2(a.validator, copy)
        html = os.path.join(tmp, "copy.html")
        run([copy], a.mutant, "--filter", "consumer.byte_offset.*", "--html", html)
        text = open(html, encoding="utf-8").read()
        if "requirements.md#" in text or f"<code>{copy} explain LAYOUT-08</code>" not in text:
            problems.append("HTML of a validator outside its build tree: a requirement link, or no explain command")
    if a.python_validator:
        check_front("python -m validator", [a.python_validator], "CAP-03", "python.capsule.destructor.unconsumed",
                    ["CAP-03 · MUST", "PKG --filter python.capsule.destructor.unconsumed"], "CAP-33", "CAP-03", problems)
    for x in problems:
        print("PROBLEM:", x)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
