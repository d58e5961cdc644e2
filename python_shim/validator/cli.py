"""Command line of ``python -m validator``: the options of the dlpack-validate CLI, run by
the same C++ harness (statuses, JSON record, exit codes: 0 nothing unexpected, 1 unexpected
fail/crash/timeout/error or warn under --strict, 2 bad input, 3 internal error)."""
import argparse
import os
import sys

PROG = "python -m validator"


class _Parser(argparse.ArgumentParser):
    """argparse, but bad options are one line on stderr and exit code 2 (like the CLI)."""

    def error(self, message):
        sys.stderr.write(f"{PROG}: error: {message} (see --help)\n")
        raise SystemExit(2)


class _Once(argparse.Action):
    """A single-valued option: given twice, bad input (exit 2), as the CLI refuses it; argparse
    alone would keep the last and drop the first without a word."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = getattr(namespace, "_given_" + self.dest, 0) + 1
        setattr(namespace, "_given_" + self.dest, seen)
        if seen > 1:
            parser.error(f"{self.option_strings[-1]} given {seen} times (once at most)")
        setattr(namespace, self.dest, values)


def _table():
    from . import _dlpack_validate
    return _dlpack_validate.options()


def _add_table_options(p, command):
    """The options of `command` ("run", "bench", "report") from the options table: flags as
    store_true, repeatable globs as append, every other value as text (checked by the harness
    against the same table, so both front-ends accept and refuse the same values)."""
    for o in _table():
        if command not in o["commands"]:
            continue
        names = ([o["short"]] if o["short"] else []) + [o["flag"]]
        if o["type"] == "flag":
            p.add_argument(*names, dest=o["name"], action="store_true", help=o["help"])
        elif o["type"] == "globs":
            p.add_argument(*names, dest=o["name"], action="append", default=[], metavar=o["metavar"],
                           help=o["help"])
        else:
            p.add_argument(*names, dest=o["name"], action=_Once, metavar=o["metavar"], help=o["help"])


_PACKAGES = "importable package names (numpy, torch, ...) or MODULE:ATTR adapters"
_EPILOG = ("Exit codes: 0 nothing unexpected, 1 unexpected fail/crash/timeout/error (or warn with "
           "--strict), 2 bad input, 3 internal error. Docs (in the repository): README.md; "
           "docs/usage.md (options, statuses), docs/adapters.md (adapters for a package), "
           "docs/baselines.md, docs/ci.md (CI recipes), docs/run-record.md (the --json record).")


def _parser():
    p = _Parser(
        prog=PROG,
        description="DLPack conformance validator for Python array packages: runs the "
                    "dlpack-validate cases on each PKG as producer, consumer and exchange-API "
                    "provider.",
        epilog=_EPILOG)
    p.add_argument("packages", nargs="*", metavar="PKG", help=_PACKAGES)
    p.add_argument("--adapter", action="append", default=[], metavar="MODULE:ATTR",
                   help="an adapter object (or class/factory) for a package without a built-in "
                        "one (repeatable; the protocol: docs/adapters.md)")
    _add_table_options(p, "run")
    p.add_argument("--repro", metavar="DIR",
                   help="write, for every unexpected result (fail, crash, timeout, error), a standalone script "
                        "that shows the behaviour with only the library and the standard library imported and "
                        "states the requirement (producer and pair cases; DIR/README.md lists the rest)")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def _bench_parser():
    p = _Parser(
        prog=f"{PROG} bench",
        description="Time each DLPack exchange route of the packages: from_dlpack for every "
                    "producer/consumer pair, x.__dlpack__() + capsule consumption, and the C "
                    "exchange API when the array type has one. ns/op: median, p10 and p90 over "
                    "repeated batches; the harness's own overhead is measured (an empty route) "
                    "and subtracted. Measured in a worker interpreter unless --isolate=none.",
        epilog="Exit codes: 0 every available route measured, 1 a route failed (or, with --strict, "
               "a regression against --bench-baseline), 2 bad input, 3 internal error.")
    p.add_argument("packages", nargs="+", metavar="PKG", help=_PACKAGES)
    _add_table_options(p, "bench")
    return p


def _worker(argv):
    """``python -m validator [--adapter ...] --internal-worker SPEC...``: a fresh interpreter
    that loads the packages and runs the cases the supervisor sends (fd 3 in, fd 4 out)."""
    import faulthandler
    faulthandler.enable(all_threads=True)
    from . import _dlpack_validate
    specs = argv[argv.index("--internal-worker") + 1:]
    return _dlpack_validate.worker(specs)


def _report_parser():
    p = _Parser(prog=PROG + " report", description="re-render reports from a saved run record")
    p.add_argument("record", metavar="RUN.json")
    _add_table_options(p, "report")
    return p


def _merge_parser():
    p = _Parser(prog=PROG + " report merge",
                description="merge the records of shards (--shard K/N), machines or CI jobs into one record: "
                            "every case once, subjects united, conflicts reported (exit 1)")
    p.add_argument("records", nargs="+", metavar="RUN.json", help="run records written by --json")
    p.add_argument("-o", "--output", metavar="PATH", help="write the merged record to PATH (as --json does)")
    _add_table_options(p, "report")
    return p


def _diff_parser():
    p = _Parser(prog=PROG + " diff",
                description="what changed between two run records (regressions, fixes, other status changes, "
                            "new and removed cases), as text and with --summary-md as Markdown",
                epilog="Exit codes: 0 no regression, 1 a regression or records of different libraries, "
                       "2 bad input.")
    p.add_argument("old", metavar="OLD.json", help="the earlier record (e.g. your last release's)")
    p.add_argument("new", metavar="NEW.json", help="the later record (e.g. your main branch's)")
    p.add_argument("--allow-different-subjects", action="store_true",
                   help="records of different libraries: judge the cases matched by position instead of "
                        "exiting 1 with 'subjects differ'")
    _add_table_options(p, "report")
    return p


def _explain_parser():
    p = _Parser(prog=PROG + " explain",
                description="what a requirement id or a case id means: a requirement's text, strength, source, "
                            "what a breach looks like and the cases that test it; a case's description, "
                            "requirements and how to run it alone",
                epilog="Exit codes: 0 explained, 2 an id that is neither (the closest ids are named).")
    p.add_argument("id", metavar="ID", help="a requirement id (CAP-01, any case) or a case id")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    given = list(argv)
    if "--internal-worker" in argv:
        return _worker(argv)
    command = argv[0] if argv and argv[0] in ("bench", "report", "explain", "diff") else "run"
    if command == "report" and argv[1:2] == ["merge"]:
        command, argv = "merge", argv[1:]
    if command == "explain":
        args = _explain_parser().parse_args(argv[1:])
        from . import _dlpack_validate
        from .api import _invocation
        sys.stdout.flush()
        return _dlpack_validate.explain(args.id, _invocation())
    if command == "run":
        args = _parser().parse_args(argv)
    elif command == "bench":
        args = _bench_parser().parse_args(argv[1:])
    elif command == "merge":
        args = _merge_parser().parse_args(argv[1:])
        if args.output and getattr(args, "json", None):
            _merge_parser().error("give the output once (-o or --json)")
        if args.output:
            args.json = args.output
    elif command == "diff":
        args = _diff_parser().parse_args(argv[1:])
    else:
        args = _report_parser().parse_args(argv[1:])
    from . import _dlpack_validate, adapters
    from .api import _invocation
    if getattr(args, "version", False):
        print(f"dlpack-validate {_dlpack_validate.tool_version} (python -m validator)")
        return 0
    # Every table option the parser knows, as the texts given (the harness checks them).
    values = {}
    for o in _table():
        value = getattr(args, o["name"], None)
        if value is None or value is False or value == []:
            continue
        values[o["name"]] = ["1"] if value is True else list(value) if isinstance(value, list) else [value]
    options = {
        "command": command,
        "values": values,
        "subjects": list(getattr(args, "packages", [])) + list(getattr(args, "adapter", [])),
        "record": getattr(args, "record", None),
        "records": list(getattr(args, "records", [])),
        "old": getattr(args, "old", None),
        "new": getattr(args, "new", None),
        "allow_different_subjects": bool(getattr(args, "allow_different_subjects", False)),
        "command_line": [PROG] + given,
        # How to run this again from here (before PYTHONPATH is changed for the workers below).
        "invocation": _invocation(),
        # The supervisor appends --internal-worker and the subjects: a fresh interpreter
        # per worker, never a fork of this one.
        "worker_command": [sys.executable, "-m", "validator"],
        "preflight": adapters.preflight,
    }
    # Workers are `sys.executable -m validator`: make sure they import this very package.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH", "")
    if here not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = here + (os.pathsep + path if path else "")
    sys.stdout.flush()
    repro = getattr(args, "repro", None)
    if not repro or getattr(args, "list", False):
        return _dlpack_validate.run(options)
    import json
    import tempfile
    with tempfile.TemporaryDirectory(prefix="dlpack-validate-") as tmp:
        record = values["json"][0] if values.get("json") and values["json"] != ["-"] else os.path.join(tmp, "run.json")
        if not values.get("json"):
            values["json"] = [record]
        rc = _dlpack_validate.run(options)
        if rc in (0, 1) and os.path.exists(record):
            from . import repro as _repro
            with open(record, encoding="utf-8") as f:
                written, skipped = _repro.write(json.load(f), repro)
            sys.stdout.flush()
            sys.stderr.write(f"{PROG}: --repro: {len(written)} script(s) in {repro}"
                             + (f", {len(skipped)} unexpected result(s) without one (README.md says why)"
                                if skipped else "") + "\n")
        return rc
