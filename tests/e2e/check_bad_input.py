#!/usr/bin/env python3
"""tests/e2e/check_bad_input.py: bad input to the CLI gets one clear line on stderr and
exit code 2 (never a stack trace, never a half-written report); help/version/list exit 0."""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--validator", required=True)
    ap.add_argument("--reference", required=True)
    ap.add_argument("--bad-abi", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--bad-plugin", action="append", default=[], metavar="NAME=PATH=NEEDLE",
                    help="another library that must be refused at load with a line mentioning NEEDLE")
    a = ap.parse_args()
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    w = a.workdir
    text = os.path.join(w, "notes.txt")
    open(text, "w").write("not a library\n")
    elf32 = os.path.join(w, "lib32.so")
    open(elf32, "wb").write(b"\x7fELF\x01\x01\x01" + bytes(57))
    truncated = os.path.join(w, "trunc.so")
    open(truncated, "wb").write(b"\x7fELF\x02\x01\x01" + bytes(9))
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                             "/lib/aarch64-linux-gnu/libm.so.6") if os.path.exists(p)), None)
    report = os.path.join(w, "nodir", "out.json")
    table = [
        ("missing file", [os.path.join(w, "nope.so")], "cannot open"),
        ("directory", [w], "directory"),
        ("not ELF", [text], "not an ELF"),
        ("32-bit ELF", [elf32], "32-bit"),
        ("truncated ELF", [truncated], "truncated"),
        ("ABI version 99", [a.bad_abi], "ABI version 99"),
        ("unknown option", ["--frobnicate", a.reference], "frobnicate"),
        ("bad isolate value", ["--isolate", "thread", a.reference], "isolate"),
        ("negative timeout", ["--timeout", "-1", a.reference], "timeout"),
        ("negative load timeout", ["--load-timeout", "-1", a.reference], "load-timeout"),
        ("timeout not a number", ["--timeout", "abc", a.reference], "'abc' is not a positive number of seconds"),
        ("unknown requirement", ["--requirement", "NOPE-1", a.reference], "no such requirement id"),
        ("exclude leaves nothing", ["--exclude", "*", a.reference], "no case matches"),
        ("filter matches nothing", ["--filter", "no.such.case*", a.reference], "no case matches"),
        ("unwritable report path", ["--json", report, a.reference], "its folder '" + os.path.dirname(report) + "' does not exist"),
        ("report path a folder", ["--html", w, a.reference], "it is a folder"),
        ("malformed glob", ["--filter", "[", a.reference], "malformed glob '[': unclosed ["),
        ("malformed exclude glob", ["--exclude", "consumer.[a-", a.reference], "malformed glob 'consumer.[a-': unclosed ["),
        ("backwards range", ["--filter", "consumer.[z-a]*", a.reference], "backwards"),
        ("no subject", [], "no subject"),
    ]
    if libm:
        table.append(("library without dlpv_get_plugin", [libm], "dlpv_get_plugin"))
    if os.path.exists("/proc/version"):  # a pseudo filesystem's file: said so, not "No such file or directory"
        table.append(("report path in /proc", ["--html", "/proc/version", a.reference], "proc pseudo filesystem"))
    # Baselines (when this build has --baseline): unreadable or malformed is bad input, and no
    # report is written when the run never starts.
    helptext = subprocess.run([a.validator, "--help"], capture_output=True, text=True).stdout
    if "--baseline" in helptext:
        bad_json = os.path.join(w, "broken.baseline")
        open(bad_json, "w").write('{"entries": [ {"case": "x", ')
        not_object = os.path.join(w, "list.baseline")
        open(not_object, "w").write("[1, 2, 3]\n")
        out = os.path.join(w, "baseline-run.json")
        for name, path, needle in (("baseline missing", os.path.join(w, "nope.baseline"), "baseline"),
                                   ("baseline is a directory", w, "baseline"),
                                   ("baseline malformed JSON", bad_json, "baseline"),
                                   ("baseline not an object", not_object, "baseline")):
            table.append((name, ["--baseline", path, "--json", out, a.reference], needle))
    for spec in a.bad_plugin:
        name, path, needle = spec.split("=", 2)
        table.append((name, ["--json", os.path.join(w, f"{name}.json"), path], needle))
    problems = []
    for name, args, needle in table:
        p = subprocess.run([a.validator] + args, capture_output=True, text=True, errors="replace")
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        if p.returncode != 2:
            problems.append(f"{name}: exit {p.returncode}, expected 2 (stderr {p.stderr!r})")
        elif len(lines) != 1:
            problems.append(f"{name}: {len(lines)} stderr lines, expected 1: {p.stderr!r}")
        elif needle.lower() not in lines[0].lower():
            problems.append(f"{name}: message {lines[0]!r} does not mention {needle!r}")
        if p.stdout.strip() and name != "no subject":
            problems.append(f"{name}: printed to stdout: {p.stdout[:200]!r}")
    leftovers = [f for f in os.listdir(w) if ".tmp." in f]
    leftovers += [f for f in os.listdir(w) if f.endswith(".json")]
    if leftovers or os.path.exists(report):
        problems.append(f"partial report files left: {leftovers}")
    for name, args in (("--help", ["--help"]), ("--version", ["--version"]), ("--list", ["--list"])):
        p = subprocess.run([a.validator] + args, capture_output=True, text=True)
        if p.returncode != 0 or not p.stdout.strip():
            problems.append(f"{name}: exit {p.returncode}, stdout {p.stdout[:100]!r}")
    for pr in problems:
        print("PROBLEM:", pr)
    total = len(table) + 3
    print(f"{total - len(problems)} passed, {len(problems)} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
