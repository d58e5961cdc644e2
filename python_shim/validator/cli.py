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


def _parser():
    p = _Parser(
        prog=PROG,
        description="DLPack conformance validator for Python array packages: runs the "
                    "dlpack-validate cases on each PKG as producer, consumer and exchange-API "
                    "provider.",
        epilog="Exit codes: 0 nothing unexpected, 1 unexpected fail/crash/timeout/error (or warn "
               "with --strict), 2 bad input, 3 internal error. Docs (in the repository): README.md; "
               "docs/adapters.md (adapters for a package), docs/baselines.md, docs/ci.md (CI "
               "recipes), docs/run-record.md (the --json record).")
    p.add_argument("packages", nargs="*", metavar="PKG",
                   help="importable package names (numpy, torch, ...) or MODULE:ATTR adapters")
    p.add_argument("--adapter", action="append", default=[], metavar="MODULE:ATTR",
                   help="an adapter object (or class/factory) for a package without a built-in "
                        "one (repeatable; the protocol: docs/adapters.md)")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("--filter", action="append", default=[], metavar="GLOB",
                   help="run only cases whose id matches GLOB (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                   help="leave out cases whose id matches GLOB (repeatable)")
    p.add_argument("--requirement", action="append", default=[], metavar="ID",
                   help="run only cases citing checklist requirement ID (a glob: 'DEL-*'; repeatable)")
    p.add_argument("-x", "--exitfirst", action="store_true",
                   help="stop after the first unexpected result (the cases left are listed once as not run)")
    p.add_argument("--json", metavar="PATH",
                   help="write the canonical JSON run record to PATH ('-': stdout, the summary then goes "
                        "to stderr; with --list: the declarations)")
    _add_report_options(p)
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="per-case time limit in seconds (default 10); a case that times out is run "
                        "once more alone, with twice the time, before it is reported")
    p.add_argument("--load-timeout", type=float, default=120.0, metavar="S",
                   help="time limit in seconds for importing a package in a worker and probing it, "
                        "apart from case time (default 120)")
    p.add_argument("--isolate", default="worker", choices=["worker", "case", "none"],
                   help="worker (reused worker interpreter, default), case (one interpreter per "
                        "case) or none (in-process, for debugging)")
    p.add_argument("--strict", action="store_true",
                   help="warnings and unexpected passes count as failures")
    p.add_argument("--deterministic", action="store_true",
                   help="omit timestamps, durations and host names from the record")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the verdict line")
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
    p.add_argument("packages", nargs="+", metavar="PKG",
                   help="importable package names (numpy, torch, ...) or MODULE:ATTR adapters")
    p.add_argument("--iterations", type=int, default=0, metavar="N",
                   help="operations per batch (default 0: sized to about 5 ms per batch)")
    p.add_argument("--batches", type=int, default=21, metavar="N",
                   help="measured batches per route (default 21)")
    p.add_argument("--batch-ms", type=float, default=5.0, metavar="MS",
                   help="batch length when --iterations is 0, in milliseconds (default 5)")
    p.add_argument("--bench-baseline", metavar="PATH",
                   help="an earlier run record (or its bench section): a route whose net median "
                        "exceeds the baseline's x threshold is a warning")
    p.add_argument("--bench-threshold", type=float, default=1.5, metavar="X",
                   help="regression threshold ratio (default 1.5)")
    p.add_argument("--json", metavar="PATH", help="write the run record (with its bench section)")
    p.add_argument("--timeout", type=float, default=10.0, metavar="S",
                   help="time limit per route in seconds beyond its expected length (default 10)")
    p.add_argument("--isolate", default="worker", choices=["worker", "none"],
                   help="worker (a fresh interpreter, default) or none (this process)")
    p.add_argument("--strict", action="store_true", help="regressions fail the run")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the verdict line")
    return p


def _worker(argv):
    """``python -m validator [--adapter ...] --internal-worker SPEC...``: a fresh interpreter
    that loads the packages and runs the cases the supervisor sends (fd 3 in, fd 4 out)."""
    import faulthandler
    faulthandler.enable(all_threads=True)
    from . import _dlpack_validate
    specs = argv[argv.index("--internal-worker") + 1:]
    return _dlpack_validate.worker(specs)


def _add_report_options(p):
    p.add_argument("--html", metavar="PATH", help="write a self-contained HTML report to PATH")
    p.add_argument("--junit", metavar="PATH", help="write JUnit XML to PATH")
    p.add_argument("--summary-md", metavar="PATH",
                   help="write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY)")
    p.add_argument("--baseline", metavar="PATH",
                   help="expected results: matching failures become xfail, passes xpass")
    p.add_argument("--write-baseline", metavar="PATH",
                   help="write a baseline accepting this run's unexpected results")


def _report_parser():
    p = _Parser(prog=PROG + " report",
                                description="re-render reports from a saved run record")
    p.add_argument("record", metavar="RUN.json")
    _add_report_options(p)
    p.add_argument("--strict", action="store_true")
    p.add_argument("-q", "--quiet", action="store_true")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--internal-worker" in argv:
        return _worker(argv)
    bench = bool(argv) and argv[0] == "bench"
    report = bool(argv) and argv[0] == "report"
    if report:
        args = _report_parser().parse_args(argv[1:])
        args.packages, args.adapter, args.filter, args.json = [], [], [], None
        args.exclude, args.requirement, args.exitfirst = [], [], False
        args.timeout, args.isolate, args.deterministic, args.list, args.version = 10.0, "worker", False, False, False
    elif bench:
        args = _bench_parser().parse_args(argv[1:])
        for name in ("adapter", "filter", "exclude", "requirement"):
            setattr(args, name, [])
        args.exitfirst = False
        args.deterministic = args.list = args.version = False
    else:
        args = _parser().parse_args(argv)
    from . import _dlpack_validate, adapters
    if args.version:
        print(f"dlpack-validate {_dlpack_validate.tool_version} (python -m validator)")
        return 0
    if not args.timeout > 0:
        sys.stderr.write(f"{PROG}: error: --timeout must be a positive number of seconds\n")
        return 2
    load_timeout = getattr(args, "load_timeout", 120.0)
    if not load_timeout > 0:
        sys.stderr.write(f"{PROG}: error: --load-timeout must be a positive number of seconds\n")
        return 2
    subjects = list(args.packages) + list(args.adapter)
    options = {
        "subjects": subjects,
        "filters": args.filter,
        "excludes": args.exclude,
        "requirements": args.requirement,
        "exitfirst": args.exitfirst,
        "json": args.json,
        "timeout": args.timeout,
        "load_timeout": load_timeout,
        "isolate": args.isolate,
        "strict": args.strict,
        "deterministic": args.deterministic,
        "quiet": args.quiet,
        "list": args.list,
        "command_line": [PROG] + argv,
        # The supervisor appends --internal-worker and the subjects: a fresh interpreter
        # per worker, never a fork of this one.
        "worker_command": [sys.executable, "-m", "validator"],
        "preflight": adapters.preflight,
    }
    for key in ("html", "junit", "summary_md", "baseline", "write_baseline"):
        options[key] = getattr(args, key, None)
    if report:
        options["report"] = args.record
    if bench:
        if args.iterations < 0 or args.batches < 1 or not args.batch_ms > 0:
            sys.stderr.write(f"{PROG} bench: error: --iterations must be >= 0, --batches >= 1 "
                             f"and --batch-ms > 0\n")
            return 2
        options["bench"] = {"iterations": args.iterations, "batches": args.batches,
                            "batch_ms": args.batch_ms,
                            "baseline": args.bench_baseline, "threshold": args.bench_threshold}
    # Workers are `sys.executable -m validator`: make sure they import this very package.
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH", "")
    if here not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = here + (os.pathsep + path if path else "")
    sys.stdout.flush()
    return _dlpack_validate.run(options)
