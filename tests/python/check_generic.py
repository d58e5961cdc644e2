#!/usr/bin/env python3
"""tests/python/check_generic.py: generic mode (validator/adapters/generic.py) on the fake array
library seen as a package with no adapter (tests/python/generic/fakeplain.py: from_dlpack and
arrays with __dlpack__, nothing else).

1. `python -m validator fakeplain` falls back to generic mode by itself and gives verdicts: no
   fail, crash, error or timeout, and the subject's notes say what an adapter would add;
2. `generic:fakeplain` with a planted producer bug that survives the from_dlpack round trip
   (FAKEPLAIN_BUGS=no_destructor: the capsule of an unconsumed export is never freed) fails
   python.capsule.destructor.unconsumed, and every other case ends as in run 1; a versioned
   capsule named 'dltensor' (versioned_named_legacy) fails python.capsule.name.versioned, and the
   validator's inspector does not crash reading it;
3. a module with no from_dlpack is bad input (exit 2) whose message says what generic mode lacks;
4. without NumPy the validator's own ctypes producer makes every layout, and the inspector reads
   each back as the pattern.
Environment: PYTHONPATH with build/python, the fakearray stage and tests/python/generic."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

UNEXPECTED = {"fail", "crash", "error", "timeout"}


def run(workdir, tag, spec, bugs="", extra=(), path_first=None, quiet=True):
    out = os.path.join(workdir, f"{tag}.json")
    env = dict(os.environ, FAKEPLAIN_BUGS=bugs)
    if path_first:
        env["PYTHONPATH"] = path_first + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "validator", *(["-q"] if quiet else []), "--json", out, "--timeout", "20", *extra, spec]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, errors="replace")
    if not os.path.exists(out):
        raise SystemExit(f"{tag}: no record (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return proc, json.load(open(out))


NO_NUMPY = r"""
import math, sys
sys.modules["numpy"] = None  # NumPy not importable: the ctypes producer makes every source
import fakeplain
from validator import pattern_bytes
from validator.adapters import generic
a = generic.Adapter(fakeplain)
assert "NumPy is not importable" in a.notes[0], a.notes[0]
checked = 0
for key in [(2, 32), (0, 16), (1, 8), (6, 8), (5, 128), (4, 16)]:
    for layout in generic.LAYOUTS:
        for shape in [(3, 4), (2, 3, 2), (5,), (), (0, 3)]:
            try:
                x = a.make(shape, key, (1, 0), layout)
            except NotImplementedError:
                continue
            n = math.prod(shape)
            want = (pattern_bytes(key, math.prod(shape[1:])) * shape[0] if layout == "broadcast"
                    else pattern_bytes(key, n))
            got = a.to_bytes(x)
            assert got == want, (key, layout, shape, got.hex(), want.hex())
            checked += 1
assert checked >= 100, checked
print("no-numpy:", checked, "arrays made and read back")
"""


PATTERNS = r"""
from validator import pattern, pattern_bytes
from validator.adapters.generic import _KEYS
for key in _KEYS:
    values = pattern(key, 7)
    assert len(values) == 7, (key, values)
    if key[0] == 5:
        assert all(isinstance(v, complex) for v in values), (key, values)
    assert len(pattern_bytes(key, 8)) == (8 * key[1] + 7) // 8, key
print("pattern:", len(_KEYS), "dtypes")
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", default=None)
    args = ap.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="dlpv-generic-")
    os.makedirs(workdir, exist_ok=True)
    problems = []

    # 1. the fallback, correct library
    page = os.path.join(workdir, "correct.html")
    proc, ref = run(workdir, "correct", "fakeplain", extra=["--html", page])
    # the first screen (the verdict banner, before the subjects table) says it was generic mode
    text = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
    first = text[text.find('id="verdict"'):text.find("</header>")] if 'id="verdict"' in text else ""
    if "ran in generic mode" not in first or "an adapter" not in first:
        problems.append(f"correct fakeplain: the HTML report's first screen does not say it ran in generic mode "
                        f"and what an adapter would add: {first[:300]!r}")
    statuses = {r["id"]: r["status"] for r in ref["results"]}
    bad = {cid: st for cid, st in statuses.items() if st in UNEXPECTED}
    if bad or proc.returncode != 0:
        problems.append(f"correct fakeplain: exit {proc.returncode}, unexpected {sorted(bad.items())[:10]}")
    notes = ref["subjects"][0].get("notes", [])
    if not any(n.startswith("no built-in adapter: generic mode") for n in notes):
        problems.append(f"correct fakeplain: no generic-mode note among {notes}")
    if not any(n.startswith("an adapter (docs/adapters.md) would add:") for n in notes):
        problems.append(f"correct fakeplain: the note naming what an adapter adds is missing: {notes}")
    passed = sum(st == "pass" for st in statuses.values())
    if passed < 300:
        problems.append(f"correct fakeplain: only {passed} cases pass")

    # 2. planted producer bugs, through the generic:PKG spelling
    proc, rec = run(workdir, "no_destructor", "generic:fakeplain", bugs="no_destructor")
    got = {r["id"]: r["status"] for r in rec["results"]}
    target = "python.capsule.destructor.unconsumed"
    if got.get(target) != "fail":
        problems.append(f"no_destructor: {target} ended {got.get(target)}, not fail")
    moved = {cid: (statuses.get(cid), st) for cid, st in got.items() if cid != target and statuses.get(cid) != st}
    if moved:
        problems.append(f"no_destructor: other cases moved: {sorted(moved.items())[:10]}")
    if proc.returncode != 1:
        problems.append(f"no_destructor: exit {proc.returncode}, not 1")
    proc, rec = run(workdir, "versioned_named_legacy", "generic:fakeplain", bugs="versioned_named_legacy",
                    extra=["--filter", "python.capsule.*", "--filter", "consumer.flags.*"])
    got = {r["id"]: r["status"] for r in rec["results"]}
    if got.get("python.capsule.name.versioned") != "fail":
        problems.append(f"versioned_named_legacy: python.capsule.name.versioned ended "
                        f"{got.get('python.capsule.name.versioned')}, not fail")
    crashed = sorted(cid for cid, st in got.items() if st in ("crash", "error", "timeout"))
    if crashed:
        problems.append(f"versioned_named_legacy: {crashed[:10]} crashed or erred (the inspector must not read "
                        "a struct under the wrong name)")

    # A producer bug read back by a consumer case: the read-back goes through the package's own
    # export, and the finding says so (Subject::read_back_route), so the rule's side is not
    # taken for granted.
    zoo_env = dict(os.environ, DLPV_ZOO_BUG="producer dtype int16 strides",
                   DLPV_ZOO_HITS=os.path.join(workdir, "zoo_hits"))
    out = os.path.join(workdir, "readback_route.json")
    subprocess.run([sys.executable, "-m", "validator", "-q", "-j", "1", "--json", out,
                    "--filter", "consumer.alignment.odd.int16.legacy", "fakeplain"],
                   capture_output=True, text=True, env=zoo_env)
    rows = json.load(open(out))["results"] if os.path.exists(out) else []
    row = rows[0] if rows else {}
    if row.get("status") != "fail" or "read back through fakeplain's own __dlpack__" not in json.dumps(row):
        problems.append(f"readback route: consumer.alignment.odd.int16.legacy ended {row.get('status')} without "
                        f"the read-back route's note: {json.dumps(row)[:600]}")

    # 3. nothing to make arrays with
    p = subprocess.run([sys.executable, "-m", "validator", "-q", "json"], capture_output=True, text=True)
    if p.returncode != 2 or "no from_dlpack for generic mode" not in p.stderr:
        problems.append(f"json: exit {p.returncode}, stderr {p.stderr.strip()[-400:]!r}")
    p = subprocess.run([sys.executable, "-m", "validator", "-q", "generic:"], capture_output=True, text=True)
    if p.returncode != 2 or "generic:PKG" not in p.stderr:
        problems.append(f"generic: (no package): exit {p.returncode}, stderr {p.stderr.strip()[-400:]!r}")

    # 4. no NumPy: the ctypes producer and the inspector
    p = subprocess.run([sys.executable, "-c", NO_NUMPY], capture_output=True, text=True)
    if p.returncode != 0:
        problems.append(f"no-numpy: exit {p.returncode}: {(p.stdout + p.stderr)[-2000:]}")
    else:
        print(p.stdout.strip())

    # 5. arrays without __dlpack__ (Awkward Array's kind): every case that needs the read-back is
    # a skip saying why, none a finding about the package, and -j 1 gives the same statuses
    proc, rec = run(workdir, "noreadback", "noreadback")
    got = {r["id"]: r for r in rec["results"]}
    charged = sorted(cid for cid, r in got.items() if r["status"] in UNEXPECTED | {"warn"}
                     and "to_bytes raised" in json.dumps(r))
    if charged:
        problems.append(f"noreadback: the read-back the validator cannot make is charged to the package: {charged[:8]}")
    reasons = [r.get("message", "") for r in got.values() if r["status"] == "skip"]
    if not any(m.startswith("the validator cannot read the imported array back") for m in reasons):
        problems.append("noreadback: no case skips for the read-back (the rule's reason is missing)")
    proc1, rec1 = run(workdir, "noreadback_j1", "noreadback", extra=["-j", "1"])
    differ = sorted(cid for cid, r in got.items() if {x["id"]: x["status"] for x in rec1["results"]}.get(cid)
                    != r["status"])
    if differ:
        problems.append(f"noreadback: -j 1 and the default differ on {differ[:8]}")

    # 6. a from_dlpack that refuses everything: no DLPack spoken, one finding (KW-10), no error
    proc, rec = run(workdir, "speaksnone", "speaksnone")
    subject = rec["subjects"][0]
    if subject.get("speaks") != "no DLPack import or export" or subject.get("legacy_only"):
        problems.append(f"speaksnone: the subject reads {subject.get('speaks')!r}, legacy_only "
                        f"{subject.get('legacy_only')}")
    bad = sorted((r["id"], r["status"]) for r in rec["results"] if r["status"] in UNEXPECTED | {"warn"})
    if bad != [("python.consumer.kw.any_object", "fail")]:
        problems.append(f"speaksnone: expected one KW-10 finding, got {bad[:10]}")

    # 7. SystemExit from __dlpack__ is no refusal: the copy requests fail, saying so
    proc, rec = run(workdir, "exits", "exits", extra=["--filter", "python.kw.*", "--filter", "python.request.*"])
    exits = [r for r in rec["results"] if "SystemExit" in json.dumps(r)]
    if not exits or any(r["status"] not in ("fail", "warn") for r in exits):
        problems.append("exits: SystemExit from __dlpack__ is not a failure of the request: " +
                        str(sorted((r["id"], r["status"]) for r in exits)[:6]))
    if any(r["status"] in ("error", "crash") for r in rec["results"]):
        problems.append("exits: a SystemExit became a validator error or ended a worker")

    # 8. a load check that kills the process (a versioned capsule handed unasked) is kept as that
    # check's result, once, and every case still runs
    proc, rec = run(workdir, "probecrash", "probecrash", extra=["--filter", "python.consumer.*"])
    loads = [r for r in rec["results"] if r["id"] == "subject.load"]
    if [(r["status"], r.get("phase"), r.get("requirements")) for r in loads] != \
            [("crash", "load_check.consumer_versioned", ["CAP-09"])]:
        problems.append(f"probecrash: expected one subject.load crash at load_check.consumer_versioned (CAP-09), got "
                        f"{[(r['status'], r.get('phase'), r.get('requirements')) for r in loads]}")
    ran = [r for r in rec["results"] if r["id"] != "subject.load" and r["status"] == "pass"]
    if rec.get("not_run") or len(ran) < 5 or any(r["status"] == "crash" and r["id"] != "subject.load" for r in rec["results"]):
        problems.append(f"probecrash: the cases did not run after the load check was left out ({len(ran)} pass, "
                        f"not_run {str(rec.get('not_run'))[:200]})")

    # 9. an ml_dtypes that is there but cannot be imported (AttributeError) is no ml_dtypes: the
    # read-back of a NumPy array never fails on it
    here = os.path.dirname(os.path.abspath(__file__))
    proc, rec = run(workdir, "brokenml", "numpy", extra=["--filter", "consumer.roundtrip.*"],
                    path_first=os.path.join(here, "generic", "brokenml"))
    bad = sorted((r["id"], r["status"], r.get("observed", "")[:80]) for r in rec["results"]
                 if r["status"] in UNEXPECTED)
    if bad:
        problems.append(f"brokenml: an unimportable ml_dtypes is charged to NumPy: {bad[:4]}")

    # 10. a package that replaces json.dumps/loads and gc.collect/freeze at import: the validator's
    # protocol and collections use nothing it replaced (a record, no `error`, no crash)
    proc, rec = run(workdir, "stdlibbreaker", "stdlibbreaker", extra=["--filter", "python.consumer.*",
                                                                      "--filter", "consumer.roundtrip.*"])
    bad = sorted((r["id"], r["status"], r["message"][:100]) for r in rec["results"]
                 if r["status"] in ("error", "crash"))
    if bad or proc.returncode not in (0, 1):
        problems.append(f"stdlibbreaker: exit {proc.returncode}; {bad[:4]}")

    # 11. hostile library text (ANSI, CSI, bidi, NUL, 5 MB): the terminal summary shows it escaped,
    # the record caps it, and every report format parses with its own parser
    outs = {ext: os.path.join(workdir, f"loudlib.{ext}") for ext in ("html", "xml", "md")}
    proc, rec = run(workdir, "loudlib", "loudlib", extra=["--filter", "python.consumer.kw.*", "--html", outs["html"],
                                                          "--junit", outs["xml"], "--summary-md", outs["md"]],
                    quiet=False)
    shown = proc.stdout + proc.stderr
    if any(c in shown for c in ("\x1b", "\x9b", "\u009b", "\u202e", "\x00")):
        problems.append("loudlib: a control character of the library's message reached the terminal")
    if "\\x1B[31mRED" not in shown:
        problems.append("loudlib: the library's message is not shown escaped in the summary")
    size = os.path.getsize(os.path.join(workdir, "loudlib.json"))
    if size > 2_000_000 or "bytes in all, the record keeps the first 4096" not in json.dumps(rec):
        problems.append(f"loudlib: the record is {size} bytes, or its messages are not capped with the length noted")
    import html.parser
    import xml.etree.ElementTree as ET
    try:
        ET.parse(outs["xml"])
        html.parser.HTMLParser().feed(open(outs["html"], encoding="utf-8").read())
        md = open(outs["md"], encoding="utf-8").read()
        if "\x1b" in md or "\x1b" in open(outs["html"], encoding="utf-8").read():
            problems.append("loudlib: a raw ESC in the Markdown or HTML report")
    except Exception as ex:  # noqa: BLE001 - any parser failure is the finding
        problems.append(f"loudlib: a report does not parse: {ex!r}")
    for path in list(outs.values()) + [os.path.join(workdir, "loudlib.json")]:
        if os.path.getsize(path) > 2_000_000:
            problems.append(f"loudlib: {os.path.basename(path)} is {os.path.getsize(path)} bytes")
    from validator import _dlpack_validate as dv
    if dv.terminal_text(b"\x1b[31m\xff", True) != "\\x1B[31m\\xFF":
        problems.append("loudlib: validator._dlpack_validate.terminal_text does not escape")

    # 13. a package that writes forged results into the worker's event pipe, one worker per case:
    # each write is an intrusion incident charged to it, no forgery is believed, and each case
    # keeps the verdict of its own events (the package's real bug: a fail); every format parses
    outs = {ext: os.path.join(workdir, f"pipewriter.{ext}") for ext in ("html", "xml", "md")}
    proc, rec = run(workdir, "pipewriter", "pipewriter",
                    extra=["--isolate=case", "--filter", "consumer.roundtrip.float32.*", "--html", outs["html"],
                           "--junit", outs["xml"], "--summary-md", outs["md"]])
    statuses = sorted({r["status"] for r in rec["results"]})
    ran = [r for r in rec["results"] if r["status"] != "skip"]
    intrusions = [i for i in rec.get("incidents", []) if i.get("kind") == "intrusion"]
    if not ran or statuses not in (["fail"], ["fail", "skip"]) or any("forged" in r["message"] for r in ran):
        problems.append(f"pipewriter: the cases' own verdicts are not kept: {statuses}")
    # one for each case that ran, and one for the load (its load checks call from_dlpack too)
    if sum("while a worker was" in i["message"] for i in intrusions) < 1 or \
            sum(" ran: " in i["message"] for i in intrusions) != len(ran) or \
            any(i.get("subject") != 0 or "forged" not in i["message"] for i in intrusions):
        problems.append(f"pipewriter: {len(intrusions)} intrusions for {len(ran)} cases run: "
                        f"{rec.get('incidents', [])[:3]}")
    if proc.returncode != 1:
        problems.append(f"pipewriter: exit {proc.returncode}, expected 1")
    try:
        ET.parse(outs["xml"])
        html.parser.HTMLParser().feed(open(outs["html"], encoding="utf-8").read())
        for path in outs.values():
            if "intrusion" not in open(path, encoding="utf-8").read():
                problems.append(f"pipewriter: {os.path.basename(path)} does not show the intrusion")
    except Exception as ex:  # noqa: BLE001 - any parser failure is the finding
        problems.append(f"pipewriter: a report does not parse: {ex!r}")

    # 14. validator.pattern and pattern_bytes for every dtype of the table (complex included)
    p = subprocess.run([sys.executable, "-c", PATTERNS], capture_output=True, text=True)
    if p.returncode != 0:
        problems.append(f"pattern: exit {p.returncode}: {(p.stdout + p.stderr)[-1500:]}")

    for line in problems:
        print("PROBLEM:", line)
    print(f"generic mode: {passed} pass on the correct fake; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
