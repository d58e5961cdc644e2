"""The Python API: ``validator.run([...])`` returns the run record (docs/run-record.md) as a dict,
so a library's own test suite can assert on it::

    import validator

    def test_dlpack_conformance():
        rec = validator.run(["mylib"], filters=["python.*"])
        assert rec["summary"]["exit_code"] == 0, rec["summary"]

It is ``python -m validator`` without the command line: the same harness, cases, worker
interpreters (``sys.executable -m validator``), statuses and record.
"""
import ctypes
import os
import sys
import tempfile
import threading
import json as _json

PROG = "python -m validator"

__all__ = ["run", "BadInput", "InternalError"]


class BadInput(ValueError):
    """The run was refused before any case ran (exit code 2): an unknown package or adapter,
    a filter matching nothing, a bad option value, a malformed baseline, an unwritable report
    path. The message is the validator's one line."""


class InternalError(RuntimeError):
    """The validator itself failed (exit code 3)."""


def _invocation():
    """The shell command that runs this package again from the current directory, for the
    reports' "run one case again" lines (the record's ``invocation``): this interpreter
    (``sys.executable``) with ``-P`` where it has it (3.11+: the current directory is not put
    first on sys.path, where a checkout's own ``validator/`` folder, the C++ CLI's sources, would
    hide this package), and ``PYTHONPATH`` as absolute paths: this package's parent unless it
    was installed (site-packages), then what PYTHONPATH already held (where the packages under
    test may come from). Call it before PYTHONPATH is changed for the workers."""
    import shlex
    import site
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = set()
    try:
        installed.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # a virtualenv's old site.py
        pass
    if site.ENABLE_USER_SITE:
        installed.add(os.path.realpath(site.getusersitepackages()))
    path = [] if os.path.realpath(here) in installed else [here]
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.abspath(p) not in path:
            path.append(os.path.abspath(p))
    words = [shlex.quote(sys.executable or "python3")]
    if sys.version_info >= (3, 11):
        words.append("-P")
    words += ["-m", "validator"]
    env = ["PYTHONPATH=" + shlex.quote(os.pathsep.join(path))] if path else []
    return " ".join(env + words)


def _strings(name, value):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    try:
        out = list(value)
    except TypeError:
        raise BadInput(f"{name} must be a string or a list of strings, not {type(value).__name__}") from None
    for v in out:
        if not isinstance(v, str):
            raise BadInput(f"{name} must hold strings, not {type(v).__name__}")
    return out


def _path(name, value):
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise BadInput(f"{name} must be a path, not {type(value).__name__}")
    return os.fspath(value)


def _text(name, value):
    """A number or choice as text for the harness, which checks it against the options table."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadInput(f"{name} must be a number or a string, not {value!r}")
    return value if isinstance(value, str) else repr(value)


# validator.run's own default, unlike the command line's: nothing on stdout.
_API_DEFAULTS = {"quiet": True}


class _Redirect:
    """fd-level redirection for the length of a run: the C++ harness writes with stdio, not
    through sys.stdout/sys.stderr. Quiet: stdout (the verdict line) goes to /dev/null and stderr
    is kept, to become a BadInput's message or be written to sys.stderr afterwards (where
    pytest captures it). Not quiet: stderr is copied through as it comes (live progress)."""

    def __init__(self, quiet):
        self.quiet = quiet
        self.text = []

    def __enter__(self):
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except (AttributeError, ValueError, OSError):
                pass
        self.saved_out = os.dup(1) if self.quiet else None
        if self.quiet:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
        self.saved_err = os.dup(2)
        r, w = os.pipe()
        os.dup2(w, 2)
        os.close(w)
        self.reader = threading.Thread(target=self._copy, args=(r,), daemon=True)
        self.reader.start()
        return self

    def _copy(self, r):
        with os.fdopen(r, "rb", buffering=0) as pipe:
            while True:
                chunk = pipe.read(65536)
                if not chunk:
                    return
                self.text.append(chunk)
                if not self.quiet:
                    try:
                        os.write(self.saved_err, chunk)
                    except OSError:
                        pass

    def __exit__(self, *exc):
        try:
            ctypes.CDLL(None).fflush(None)  # what C stdio still buffers goes where it was meant
        except (OSError, AttributeError):
            pass
        os.dup2(self.saved_err, 2)  # closes the pipe's last write end: the reader sees EOF
        self.reader.join(timeout=10)
        os.close(self.saved_err)
        if self.saved_out is not None:
            os.dup2(self.saved_out, 1)
            os.close(self.saved_out)
        return False

    def output(self):
        return b"".join(self.text).decode("utf-8", "replace")

    def message(self):
        text = self.output().strip()
        lines = [ln for ln in text.splitlines() if ln.strip()]
        line = lines[-1] if lines else "bad input (exit code 2)"
        for prefix in (f"{PROG}: error: ", f"{PROG}: "):
            if line.startswith(prefix):
                return line[len(prefix):]
        return line


def run(subjects, **keywords):
    """Validate Python packages and return the run record (docs/run-record.md) as a dict.

    subjects: importable package names (``"numpy"``, ``"mylib"``) or ``"module:attr"`` adapters
    (docs/adapters.md); a single string is one subject. Cases run in fresh worker interpreters
    (``sys.executable -m validator``), so an adapter is named, never passed as an object.

    The keywords are the command line's options, from the same options table
    (``validator.options()`` lists them with their defaults and help): ``filters``
    (``--filter``), ``exclude``, ``requirements`` (globs, a string or a list), ``timeout``
    (seconds per case), ``load_timeout`` (seconds to import and run the load checks of a package in a worker,
    apart from case time), ``isolate`` (``"worker"``, ``"case"`` or ``"none"``), ``jobs``
    (cases at once, in lanes; 0: one per core), ``strict``,
    ``baseline`` (expected results: matching failures become xfail), ``deterministic``,
    ``exitfirst``; report paths ``json``, ``html``, ``junit``, ``summary_md``,
    ``write_baseline`` are written as well when given.

    Quiet by default: nothing on stdout (``quiet=False`` prints the usual summary); what the
    validator writes on stderr (progress, notices) passes through.

    The verdict is in the record: ``rec["summary"]["exit_code"]`` (0 nothing unexpected, 1
    otherwise), ``rec["summary"]["verdict"]``, ``rec["summary"]["counts"]``, and each case in
    ``rec["results"]``. Raises ``BadInput`` (a ValueError) where the command would exit with 2,
    ``InternalError`` where it would exit with 3, TypeError for a keyword it does not know.
    """
    from . import _dlpack_validate, adapters

    table = [o for o in _dlpack_validate.options() if o["keyword"] and "run" in o["commands"]]
    by_keyword = {o["keyword"]: o for o in table}
    for k in keywords:
        if k not in by_keyword:
            raise TypeError(f"run() got an unexpected keyword argument {k!r} (known: "
                            f"{', '.join(sorted(by_keyword))})")
    subjects = _strings("subjects", subjects)
    if not subjects:
        raise BadInput("no subjects: name at least one package or module:attr adapter")
    given = dict(_API_DEFAULTS, **keywords)
    values, argv = {}, list(subjects)
    for o in table:  # in the table's order: the equivalent command line reads as --help does
        key = o["keyword"]
        value = given.get(key)
        if o["type"] == "flag":
            if value:
                values[o["name"]] = ["1"]
                argv.append(o["short"] or o["flag"])
            continue
        if o["type"] == "globs":
            texts = _strings(key, value)
        elif o["type"] == "path":
            texts = [] if value is None else [_path(key, value)]
        else:
            texts = [] if value is None else [_text(key, value)]
        if texts:
            values[o["name"]] = texts
            for t in texts:
                argv += [o["flag"], t]
    if values.get("json") == ["-"]:
        raise BadInput("json='-' (stdout) is for the command line; the record is returned")
    quiet = bool(given.get("quiet"))

    with tempfile.TemporaryDirectory(prefix="dlpack-validate-") as tmp:
        record_path = values["json"][0] if "json" in values else os.path.join(tmp, "run.json")
        values["json"] = [record_path]
        options = {
            "command": "run",
            "values": values,
            "naming": "keywords",
            "subjects": subjects,
            "command_line": [PROG] + argv,
            "invocation": _invocation(),
            "worker_command": [sys.executable, "-m", "validator"],
            "preflight": adapters.preflight,
        }
        # Workers are `sys.executable -m validator`: they must import this very package (it
        # may have come from sys.path, not from site-packages). Restored afterwards.
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        old = os.environ.get("PYTHONPATH")
        if here not in (old or "").split(os.pathsep):
            os.environ["PYTHONPATH"] = here + (os.pathsep + old if old else "")
        try:
            with _Redirect(quiet) as out:
                rc = _dlpack_validate.run(options)
        finally:
            if old is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = old
        if rc == 2:
            raise BadInput(out.message())
        if quiet and out.output():
            sys.stderr.write(out.output())
        if rc not in (0, 1):
            raise InternalError(f"dlpack-validate failed (exit code {rc}): {out.message()}")
        try:
            with open(record_path, encoding="utf-8") as f:
                return _json.load(f)
        except (OSError, ValueError) as e:
            raise InternalError(f"the run record {record_path} could not be read: {e}") from None
