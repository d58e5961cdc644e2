#!/usr/bin/env python3
"""tests/identity/identity.py: proof that a change left the verdicts alone.

  identity.py capture --build BUILD --out DIR [--python CMD] [--peers PY] [--only GLOB]
      runs the validator with --deterministic --json on every fixture it finds in BUILD (the
      reference plugin, every mutant, the lawful fixtures, the hostile fixtures that end the
      same way every time, fakearray and its variants through CMD, the pinned peers through
      PY), normalises each record and writes DIR/NAME.json plus DIR/manifest.tsv (identity
      per case and per fixture, made from every record in DIR; see manifest_of)
  identity.py compare A B
      compares two captures (directories) or manifests: which fixtures differ and, for each,
      the first results that do
  identity.py check --build BUILD --manifest tests/identity/manifest.tsv [--update] [--jobs N]
                    [--stage capture|compare|both]
      captures the fixtures named in the manifest (into BUILD/identity; each run as it came in
      BUILD/identity/raw, which tests/e2e/check_run.py --from-capture judges) and compares; --update
      rewrites the manifest (a deliberate change of verdicts, reviewed with the diff). A case
      line that moved is shown with what this capture holds for it on each fixture where it
      differs from the correct library (the manifest keeps only digests)

--jobs N runs N fixtures side by side, each still a -j 1 run of its own: the records do not
change, only the time.

The manifest holds one line per case id (the digest of that case's result on the correct library
of its family and of every result elsewhere that differs from it) and one per fixture (the digest
of its record less the results and what is counted from them), so a new case adds a line and
changes none of the others, and a new fixture changes only the lines of the cases it breaks.

Normalising drops what a rerun changes and the verdicts do not: times, command line (and the
invocation, how to run the program again), host,
paths of the fixtures, supervisor figures, output tails, the `observed` measurements (heap
growth, bytes read from freed memory), and masks addresses (0x...), code offsets in stack
traces a library prints into its messages, protocol nonces and sequence numbers, process
ids, memory figures, the heap figures of a leak loop's note, and numbers of seven digits or more (garbage read as a number) inside
messages. Fields that would name source files (none today) are
dropped too, so moving code between files cannot change a record.
"""
import argparse
import concurrent.futures
import fnmatch
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

DROP_TOP = {"command_line", "invocation", "started_at", "duration_s", "environment", "supervisor"}
# `observed` is the measurement itself (heap growth, the bytes found in freed memory): it varies
# from run to run where the verdict does not. Everything else of a result stays.
# `charged_to` is computed from the rest of the result (status, phase, the checks' parties:
# verdict::charge_of), as pair_matrix is from the results: the verdicts are what it rests on.
# `first_try`: a case whose first try timed out and whose run alone with twice the time decided it
# says so there; whether the first try met the limit is the machine's load (a CI run of
# plugin.mut_null_deleter and one here differed by it), the verdict is the second try's.
DROP_RESULT = {"duration_s", "output_tail", "source", "file", "line", "observed", "charged_to", "first_try"}
# The heap figures a leak loop's note gives ("131088 bytes over 4000 cycles, then 262160 over
# 8000, then 0 over 8000 again"): the allocator's noise moves them by a few KiB from run to run.
GROWTH = re.compile(r"-?\d+ (bytes over \d+ cycles, then )-?\d+( over \d+)(, then )?-?\d*( over \d+ again)?")
NONCE = re.compile(r'(nonce\\?":\\?")[0-9a-f]{16}')
# An event's place in its command's sequence (docs/protocol.md), quoted in protocol-violation
# messages with the line: protocol detail like the nonce, not a verdict (dropped: a record made
# before events were numbered then reads the same).
SEQ = re.compile(r',\\?"seq\\?":\d+')
ADDRESS = re.compile(r"0x[0-9a-fA-F]{5,}")
OFFSET = re.compile(r"\+ 0x[0-9a-fA-F]+")  # "function + 0x570" in a library's stack trace: code moves
PID = re.compile(r"\b(pid|process) \d+")
MEMORY = re.compile(r"using \d+ MiB")
BIG = re.compile(r"-?\b\d{7,}\b")  # seven digits or more: pointer bits read as numbers
BIG_VERSION = re.compile(r"\bBIG\.\d+\b")
# A case's time limit is --timeout times its subject's pace (docs/design.md §7): on a busy
# machine a timeout's message names both; the verdict is the same, so the limit is --timeout's.
PACE = re.compile(r"within [0-9.]+ s \(([0-9.]+) s, times this subject's pace [0-9.]+ on this busy machine\)")
# ... and a timeout reads "within 2T" when its second try reproduced it, "within T" when the hang
# was already known (not run again): which of the two is timing, the verdict is not.
WITHIN = re.compile(r"the case did not finish within [0-9.]+ s")
# A timeout is confirmed alone, unless the subject's hang in that phase already reproduced in an
# earlier timeout (docs/design.md §7); with several lanes which of two such cases came first
# depends on timing. The verdict is the same: both read as confirmed.
KNOWN_HANG = re.compile(r" \(not run again: this subject's hang in phase '[^']*' already reproduced alone in a "
                        r"fresh worker with twice the time, in [^)]*\)")
CONFIRMED = " (reproduced: run again alone in a fresh worker with twice the time)"
REPRODUCED = re.compile(r" \(reproduced: run again alone in a fresh worker with twice the time, after the first try "
                        r"had timed out at [0-9.]+ s\)")
BUILD_PATH = None
OWN_IMAGE = re.compile(r"BUILD/tests/libdlpv_[A-Za-z0-9_]+\.so")

# Hostile libraries whose outcome depends on timing (they die at a random moment) are left out.
HOSTILE_TIMING = {"ctor_thread_abort", "ctor_itimer", "chaos_bugged", "chaos_clean",
                  # longjmps into a frame long gone: which signal ends the worker (SIGSEGV or
                  # SIGABRT) depends on what the stack holds
                  "longjmp_in_deleter"}
# Fixtures whose planted bug uses memory after freeing it: which cases crash and which fail
# depends on the heap (a fresh build differed from two runs here). Left out.
HEAP_DEPENDENT = {"fakearray.destructor_ignores_used",
                  # frees the buffer under an exported tensor: a fresh clone's build read the
                  # freed bytes intact where this one did not (pair.bfloat16.contiguous.legacy)
                  "fakearray.buffer_not_kept"}
HOSTILE_FILTERS = ["--filter=producer.tensor.float32.contiguous.*", "--filter=consumer.roundtrip.float32.contiguous.*"]


def mask(v):
    if isinstance(v, str):
        v = ADDRESS.sub("0xADDR", v)
        v = OFFSET.sub("+ 0xOFF", v)
        v = NONCE.sub(r"\1NONCE", v)
        v = GROWTH.sub(lambda m: "N " + m.group(1) + "N" + m.group(2) + ((m.group(3) + "N" + m.group(4)) if m.group(4) else ""), v)
        v = SEQ.sub("", v)
        v = PID.sub(r"\1 N", v)
        v = MEMORY.sub("using N MiB", v)
        v = PACE.sub(r"within \1 s", v)
        v = WITHIN.sub("the case did not finish within N s", v)
        v = KNOWN_HANG.sub(CONFIRMED, v)
        v = REPRODUCED.sub(CONFIRMED, v)
        v = BIG.sub("BIG", v).replace("-BIG", "BIG")
        # a pointer read as a version {major, minor}: the minor is the pointer's high half (ASLR)
        v = BIG_VERSION.sub("BIG.BIG", v)
        if BUILD_PATH:
            v = v.replace(BUILD_PATH, "BUILD")
        # The fixture's own image, named where a check says where the exchange table lives
        # (exchange_api.table.static): the same verdict on every plugin fixture, so the case's
        # line does not move whenever a fixture is added.
        v = OWN_IMAGE.sub("BUILD/tests/libdlpv_SUBJECT.so", v)
        return v
    if isinstance(v, list):
        return [mask(x) for x in v]
    if isinstance(v, dict):
        return {k: mask(x) for k, x in v.items()}
    return v


def normalise(record):
    rec = {k: v for k, v in record.items() if k not in DROP_TOP}
    # The load deadline is a budget for loading, like the supervisor's figures: not a verdict.
    rec.get("options", {}).pop("load_timeout_s", None)
    # Where requirement ids link to names this machine's checkout (file:///.../docs/requirements.md):
    # kept as the repository path it is.
    doc = rec.get("tool", {}).get("requirements_doc")
    if isinstance(doc, str) and doc.endswith("/docs/requirements.md"):
        rec["tool"]["requirements_doc"] = "docs/requirements.md"
    for s in rec.get("subjects", []):
        s["path"] = os.path.basename(str(s.get("path", "")))
    for r in rec.get("results", []):
        for k in DROP_RESULT:
            r.pop(k, None)
        if r.get("status") == "timeout":
            r.pop("first_try", None)  # absent where the hang was known (KNOWN_HANG)
        for c in r.get("checks", []):
            c.pop("observed", None)
    for i in rec.get("incidents", []):
        i.pop("output_tail", None)
    return mask(rec)


def fixtures(build, python_cmd, peers_python):
    """(name, program, arguments, env) for every fixture found in the build tree."""
    build = os.path.abspath(build)  # messages name paths: always absolute, then masked
    v = os.path.join(build, "dlpack-validate")
    # A mutant's own run arguments (tests/proofs/mutants.tsv @arg lines, e.g. the hanging
    # importer's filters) apply here too.
    # A hostile library that needs time (its @timeout in tests/proofs/hostile.tsv is above 1 s:
    # unbounded allocation, a forked child) gets it here too; the others run at 0.4 s.
    # Its @load_timeout too (a constructor that never returns: 2 s, not 10, each of two tries).
    args_of, timeout_of, load_timeout_of = {}, {}, {}
    proofs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "proofs")
    for table, prefix in (("mutants.tsv", "mut_"), ("hostile.tsv", "")):
        for line in open(os.path.join(proofs, table)):
            fields = line.rstrip("\n").split("\t")
            if len(fields) == 3 and fields[1] == "@arg":
                args_of.setdefault(prefix + fields[0], []).append(fields[2])
            elif len(fields) == 3 and fields[1] == "@timeout" and float(fields[2]) > 1:
                timeout_of[fields[0]] = fields[2]
            elif len(fields) == 3 and fields[1] == "@load_timeout":
                load_timeout_of[fields[0]] = fields[2]
    out = []
    # The plugins the proof tables name (not whatever .so an old build left behind).
    here = os.path.dirname(os.path.abspath(__file__))
    names = ["reference"]
    for table, prefix in (("mutants.tsv", "mut_"), ("lawful.tsv", "lawful_")):
        for line in open(os.path.join(here, "..", "proofs", table)):
            if line.strip() and not line.startswith("#"):
                name = prefix + line.split("\t")[0]
                if name not in names:
                    names.append(name)
    for name in sorted(names):
        so = os.path.join(build, "tests", f"libdlpv_{name}.so")
        out.append((f"plugin.{name}", [v], ["--timeout", "2"] + args_of.get(name, []) + [so], {}))
    for so in sorted(glob.glob(os.path.join(build, "tests", "hostile", "libdlpv_hostile_*.so"))):
        name = os.path.basename(so)[len("libdlpv_hostile_"):-3]
        if name in HOSTILE_TIMING:
            continue
        out.append((f"hostile.{name}", [v], ["--timeout", timeout_of.get(name, "0.4"), "--load-timeout", load_timeout_of.get(name, "10")] + HOSTILE_FILTERS + [so],
                    {"DLPV_MEMORY_LIMIT_MIB": "256"}))
    if python_cmd:
        env = {"PYTHONPATH": os.pathsep.join([os.path.join(build, "python"),
                                              os.path.join(build, "tests", "python", "stage")])}
        fake = os.path.join(build, "tests", "python", "stage", "fakearray", "__init__.py")
        if os.path.exists(fake):
            names = ["correct"]
            text = open(fake).read()
            for block in re.findall(r"(?:KNOWN_BUGS|LAWFUL) = frozenset\(\{(.*?)\}\)", text, re.S):
                names += re.findall(r'"([a-z0-9_]+)"', block)
            for n in sorted(set(names)):
                if f"fakearray.{n}" in HEAP_DEPENDENT:
                    continue
                out.append((f"fakearray.{n}", python_cmd, ["--timeout", "5", f"fakearray.variants:{n}"], env))
    if peers_python:
        for lib in ["numpy", "torch", "jax", "paddle", "tvm_ffi", "pyarrow", "array_api_strict", "tensorflow", "mlx"]:
            out.append((f"peer.{lib}", [peers_python, "-m", "validator"], [lib],
                        {"PYTHONPATH": os.path.join(build, "python"), "TF_CPP_MIN_LOG_LEVEL": "3"}))
    return out


def capture(build, dest, python_cmd=None, peers_python=None, only=None, jobs=1):
    global BUILD_PATH
    BUILD_PATH = os.path.abspath(build)
    os.makedirs(os.path.join(dest, "raw"), exist_ok=True)
    todo = [f for f in fixtures(build, python_cmd, peers_python)
            if not only or any(fnmatch.fnmatchcase(f[0], g) for g in only)]
    started = time.monotonic()

    def one(item):
        name, program, arguments, env = item
        path = os.path.join(dest, name + ".json")
        raw = path + ".raw"
        full_env = dict(os.environ, **env)
        t0 = time.monotonic()
        # One lane (-j 1): a planted bug that reads or writes out of bounds ends the same way only
        # in the same worker history (which lane runs which case is timing); e2e.jobs checks that
        # -j N gives the records of -j 1 on fixtures whose verdicts do not hang on the heap.
        # Fixtures run side by side (--jobs): each is its own validator run, so a record cannot
        # depend on its neighbours, only on the load, which the validator's own rules absorb (a
        # timeout is confirmed alone with twice the time before it is reported).
        proc = subprocess.run(program + ["-q", "--deterministic", "-j", "1", "--json", raw] + arguments,
                              capture_output=True, text=True, env=full_env, timeout=1800)
        try:
            record = normalise(json.load(open(raw)))
        except (OSError, ValueError):
            record = {"no_record": True, "exit": proc.returncode, "stderr": mask(proc.stderr.strip()[-500:])}
        record["exit_code"] = proc.returncode
        text = json.dumps(record, indent=1, sort_keys=True) + "\n"
        open(path, "w").write(text)
        # The run as it came (raw/NAME.json, its exit code and stderr beside it): the proof tests
        # of the same fixture (tests/e2e/check_run.py --from-capture) judge this run instead of
        # making their own, so each fixture runs once per CTest.
        if os.path.exists(raw):
            os.replace(raw, os.path.join(dest, "raw", name + ".json"))
            json.dump({"exit_code": proc.returncode, "stderr": proc.stderr[-4000:], "arguments": arguments},
                      open(os.path.join(dest, "raw", name + ".run"), "w"))
        return name, hashlib.sha256(text.encode()).hexdigest()[:12], time.monotonic() - t0

    print(f"capturing {len(todo)} fixtures, {jobs} at a time", flush=True)
    done = 0
    # Each fixture's wall time (seconds, slowest first), for whoever looks for what a capture costs:
    # the records are deterministic and carry no times.
    took_of = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(one, item) for item in todo]
        for fut in concurrent.futures.as_completed(futures):
            name, short, took = fut.result()
            took_of[name] = took
            done += 1
            # How far it got, for whoever reads the output of a run stopped by a hang guard: every
            # 25th fixture and every slow one (a line per fixture buried the differences in CI's log).
            if done % 25 == 0 or done == len(todo) or took > 60:
                print(f"{short}  {name}  [{done}/{len(todo)}, {took:.0f} s for it, "
                      f"{time.monotonic() - started:.0f} s in all]", flush=True)
    with open(os.path.join(dest, "timings.tsv"), "w") as f:
        for name, took in sorted(took_of.items(), key=lambda kv: (-kv[1], kv[0])):
            f.write(f"{took:.2f}\t{name}\n")
    # A partial capture (--only) keeps the other fixtures' records of the same directory.
    manifest = manifest_of(dest)
    write_manifest(os.path.join(dest, "manifest.tsv"), manifest)
    return manifest


# What a fixture's record holds besides its results that is counted from the results (so it
# changes whenever a case is added): left out of the fixture's own line.
DERIVED_TOP = {"results", "requirements", "pair_matrix"}
DERIVED_SUMMARY = {"total", "counts", "unexpected", "not_run", "incidents"}


def digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:32]


# A fixture's results are compared with its family's correct library: a case's line holds the
# reference's result and only the results that differ from it, so a new fixture changes just the
# lines of the cases its planted bug reaches.
def reference_of(name):
    if name.startswith(("plugin.", "hostile.")):
        return "plugin.reference"
    if name.startswith("fakearray."):
        return "fakearray.correct"
    return None


def manifest_of(dest):
    """{("fixture", NAME): digest, ("case", ID): digest} from every NAME.json in dest."""
    records, manifest = {}, {}
    for path in sorted(glob.glob(os.path.join(dest, "*.json"))):
        name = os.path.basename(path)[:-5]
        record = json.load(open(path))
        records[name] = record
        rest = {k: v for k, v in record.items() if k not in DERIVED_TOP}
        if isinstance(rest.get("summary"), dict):
            rest["summary"] = {k: v for k, v in rest["summary"].items() if k not in DERIVED_SUMMARY}
        # Which cases were not run is counted from the catalogue: only why is the fixture's.
        rest["not_run"] = [{"subject": n.get("subject"), "reason": n.get("reason")} for n in rest.get("not_run") or []]
        manifest[("fixture", name)] = digest(rest)

    def keyed(record):
        return {(r["id"], r.get("subject"), str(r.get("peer"))): r for r in record.get("results", [])}

    refs = {n: keyed(records[n]) for n in ("plugin.reference", "fakearray.correct") if n in records}
    per_case = {}
    for name, record in records.items():
        ref = refs.get(reference_of(name)) if reference_of(name) != name else None
        for key, r in keyed(record).items():
            if ref is not None and ref.get(key) == r:
                continue  # as on the correct library: the reference's own line covers it
            per_case.setdefault(r["id"], []).append([name, r])
    for case_id, results in per_case.items():
        results.sort(key=lambda nr: (nr[0], nr[1].get("subject"), str(nr[1].get("peer"))))
        manifest[("case", case_id)] = digest(results)
    return manifest


def read_manifest(path):
    out = {}
    for line in open(path):
        line = line.rstrip("\n")
        if line and not line.startswith("#"):
            kind, key, value = line.split("\t")
            out[(kind, key)] = value
    return out


def write_manifest(path, manifest):
    with open(path, "w") as f:
        f.write("# kind\tkey\tdigest: per fixture (its normalised --deterministic record less the results and "
                "their counts) and per case id (its results on every fixture); tests/identity/identity.py\n")
        for kind, key in sorted(manifest):
            f.write(f"{kind}\t{key}\t{manifest[(kind, key)]}\n")


def fixture_names(manifest):
    return sorted(key for kind, key in manifest if kind == "fixture")


def first_differences(a_path, b_path, limit=5):
    try:
        a, b = json.load(open(a_path)), json.load(open(b_path))
    except (OSError, ValueError):
        return ["(one of the records is missing)"]
    out = []
    ka = {(r["id"], r["subject"], r.get("peer")): r for r in a.get("results", [])}
    kb = {(r["id"], r["subject"], r.get("peer")): r for r in b.get("results", [])}
    for k in sorted(set(ka) | set(kb), key=str):
        if ka.get(k) != kb.get(k):
            ra, rb = ka.get(k) or {}, kb.get(k) or {}
            out.append(f"{k[0]}: {ra.get('status')} -> {rb.get('status')} "
                       f"({(ra.get('message') or '')[:80]!r} -> {(rb.get('message') or '')[:80]!r})")
            if len(out) >= limit:
                break
    if not out:
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                out.append(f"field {key} differs")
    return out


def observed_lines(dest, case_id, limit=6):
    """What a capture holds for case_id: the correct libraries' results, then each fixture's where
    it differs from its family's correct library (what the case's manifest line is made of). A
    manifest keeps only digests, so a CI log that says a case line moved shows with this what
    the run saw."""
    found = {}
    for path in sorted(glob.glob(os.path.join(dest, "*.json"))):
        name = os.path.basename(path)[:-5]
        try:
            results = json.load(open(path)).get("results", [])
        except (OSError, ValueError):
            continue
        found[name] = [r for r in results if r["id"] == case_id]

    def line(name, r):
        return f"{name}: {r.get('status')} {(r.get('message') or '')[:150]!r}"

    refs = [line(n, r) for n in ("plugin.reference", "fakearray.correct") for r in found.get(n, [])]
    differing = []
    for name, results in found.items():
        ref = reference_of(name)
        if ref is None or ref == name:
            if ref is None:
                differing += [line(name, r) for r in results]
            continue
        base = {(r.get("subject"), str(r.get("peer"))): r for r in found.get(ref, [])}
        differing += [line(name, r) for r in results if base.get((r.get("subject"), str(r.get("peer")))) != r]
    more = [f"... and {len(differing) - limit} more"] if len(differing) > limit else []
    return refs + (differing[:limit] or ["(no fixture differs from its correct library)"]) + more


def compare(a_dir, b_dir):
    ma = read_manifest(os.path.join(a_dir, "manifest.tsv") if os.path.isdir(a_dir) else a_dir)
    mb = read_manifest(os.path.join(b_dir, "manifest.tsv") if os.path.isdir(b_dir) else b_dir)
    keys = sorted(set(ma) | set(mb))
    bad = [k for k in keys if ma.get(k) != mb.get(k)]
    for kind, key in bad:
        print(f"DIFFERS {kind} {key}: {ma.get((kind, key), 'absent')[:12]} vs {mb.get((kind, key), 'absent')[:12]}")
        if kind == "fixture" and os.path.isdir(a_dir) and os.path.isdir(b_dir):
            for line in first_differences(os.path.join(a_dir, key + ".json"), os.path.join(b_dir, key + ".json")):
                print("    " + line)
        elif kind == "case" and len(bad) <= 40:
            for line in observed_lines(b_dir if os.path.isdir(b_dir) else os.path.dirname(b_dir), key):
                print("    now " + line)
    fixtures = sum(1 for k in keys if k[0] == "fixture")
    cases = len(keys) - fixtures
    print(f"{len(keys) - len(bad)} of {len(keys)} identity lines identical "
          f"({fixtures} fixtures, {cases} case ids)")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--build", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--python", help="command for the Python shim, e.g. '/usr/bin/python3 -m validator'")
    c.add_argument("--peers", help="the pinned peers' interpreter")
    c.add_argument("--only", action="append")
    c.add_argument("--jobs", type=int, default=1, help="fixtures run side by side (each at -j 1)")
    n = sub.add_parser("renormalise", help="apply the current normalisation to a capture again")
    n.add_argument("dir")
    k = sub.add_parser("compare")
    k.add_argument("a")
    k.add_argument("b")
    h = sub.add_parser("check")
    h.add_argument("--build", required=True)
    h.add_argument("--manifest", required=True)
    h.add_argument("--python")
    h.add_argument("--update", action="store_true")
    h.add_argument("--jobs", type=int, default=1, help="fixtures run side by side (each at -j 1)")
    h.add_argument("--stage", choices=["capture", "compare", "both"], default="both",
                   help="capture: run the fixtures into BUILD/identity only (CTest's identity.capture, "
                        "whose records the proof tests also judge); compare: judge that capture "
                        "against the manifest without running anything; both (default): one then the other")
    args = ap.parse_args()
    if args.cmd == "capture":
        capture(args.build, args.out, args.python.split() if args.python else None, args.peers, args.only,
                args.jobs)
        return 0
    if args.cmd == "renormalise":
        for path in sorted(glob.glob(os.path.join(args.dir, "*.json"))):
            rec = normalise(json.load(open(path)))
            open(path, "w").write(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        write_manifest(os.path.join(args.dir, "manifest.tsv"), manifest_of(args.dir))
        return 0
    if args.cmd == "compare":
        return compare(args.a, args.b)
    want = read_manifest(args.manifest)
    dest = os.path.join(args.build, "identity")
    if args.stage != "compare":
        shutil.rmtree(dest, ignore_errors=True)  # a fresh capture: nothing left from older builds
        got = capture(args.build, dest, args.python.split() if args.python else None, None,
                      None if args.update else fixture_names(want), args.jobs)
        if args.stage == "capture":
            return 0
    else:
        try:
            got = read_manifest(os.path.join(dest, "manifest.tsv"))
        except OSError:
            print(f"no capture in {dest}: run with --stage capture first")
            return 1
    try:  # the pinned records were made without a GPU; a real driver changes the CUDA cases
        import ctypes
        lib = ctypes.CDLL("libcuda.so.1")
        if not hasattr(lib, "dlpv_emulated_cuda_driver"):
            print("skipped: a real CUDA driver is loadable here; the pinned records are CPU-only")
            return 77
    except OSError:
        pass
    if args.update:
        write_manifest(args.manifest, got)
        print(f"wrote {len(got)} identity lines to {args.manifest}")
        return 0
    missing = sorted(set(fixture_names(want)) - set(fixture_names(got)))
    if missing:
        print(f"fixtures in the manifest but not in the build: {missing}")
    rc = compare(args.manifest, os.path.join(dest, "manifest.tsv"))
    if rc:
        print("Verdicts changed. If that is intended, rerun with --update and review the diff of "
              "tests/identity/manifest.tsv; else compare against a capture made before the change.")
    return rc or (1 if missing else 0)


if __name__ == "__main__":
    sys.exit(main())
