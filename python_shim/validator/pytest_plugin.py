"""pytest plugin: every dlpack-validate case as a pytest item (docs/pytest.md).

    pytest --dlpack-validate numpy                 # one item per case and package
    pytest --dlpack-validate numpy torch -k copy -n 2

The wheel registers it (entry point ``pytest11``), so nothing is needed beyond installing
dlpack-validate; in a source tree, ``-p validator.pytest_plugin``. A library puts it in its own
suite with one line: ``addopts = "--dlpack-validate mylib"`` under ``[tool.pytest.ini_options]``
in pyproject.toml, or ``dlpack_validate = mylib`` (the ini key), or in conftest.py
``pytest_plugins = ["validator.pytest_plugin"]`` where the entry point is not installed.

Items are named ``CASE_ID[SUBJECT]`` (``CASE_ID[PRODUCER->CONSUMER]`` for the pair cases), with
the node id ``dlpack-validate::NAME``, so ``-k``, ``--deselect``, ``-x``, ``--lf`` and
``--junitxml`` work on them as on any test. Markers: ``dlpack`` (keywords ``requirements`` and
``strength``), ``dlpack_must`` / ``dlpack_should`` (the case's strength) and one per
requirement id, ``dlpack_CAP_01`` for CAP-01, so ``-m dlpack_CAP_01`` selects a requirement.

The cases are not run one process per item: the first item that needs a verdict runs the
selected items in one validator run (the harness's own workers, isolation and timeouts), and
the other items read their verdict from its record. Under pytest-xdist (``-n``) the selected
items are cut into chunks; a worker runs the chunk of the item it was handed and, when
another worker is already running that chunk, runs a chunk nobody has started before it waits
for that worker (a lock the running worker holds, released when its record is written).

Statuses: pass passes; fail, crash, timeout and error fail with the case's message, the
requirement, the command that runs the case alone and where its explanation is; skip skips
with the reason; warn passes with a ``DLPackWarning`` (fails under
``--dlpack-validate-strict``). With ``--dlpack-validate-baseline``, a matched entry makes the
item xfail with the entry's reason (strict when the entry says ``"strict": true`` or under
``--dlpack-validate-strict``). The run record, HTML, Markdown summary and baseline proposal are
written as the command line writes them (``--dlpack-validate-json`` etc.), one record for the
whole session, xdist or not.
"""
import fcntl
import json
import os
import shlex
import shutil
import sys
import tempfile
import warnings

import pytest

_ROOT = "dlpack-validate"


def _terminal(text, one_line=True):
    """Library text as pytest prints it: the validator's one rule for terminals
    (reports::terminal_text: control bytes, invalid UTF-8 and the code points a terminal acts on
    shown escaped), so a library's ANSI escape cannot act on the terminal of whoever reads it."""
    from . import _dlpack_validate
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
    return _dlpack_validate.terminal_text(raw, one_line)


class DLPackWarning(UserWarning):
    """A SHOULD requirement not met (the validator's ``warn``)."""


class DLPackCaseFailure(Exception):
    """The case's verdict was fail, crash, timeout or error: the text is the whole report."""


# An option's name before the options table named it (kept so that suites using it still work).
_OLD_NAMES = {"summary_md": ["--dlpack-validate-md"]}


def _table_options():
    """The validator's options a pytest session offers: the options table's rows marked for
    pytest (app/src/options.cpp, kPytest), as ``--dlpack-validate-FLAG`` with dest
    ``dlpv_NAME``. Where the compiled module cannot be imported, none, and the reason (said
    when ``--dlpack-validate`` is used, not in every pytest session of the machine)."""
    try:
        from . import _dlpack_validate
        return [o for o in _dlpack_validate.options() if "pytest" in o["commands"]], None
    except Exception as e:  # noqa: BLE001 -- an unusable install must not break unrelated suites
        return [], f"{type(e).__name__}: {e}"


_UNUSABLE = []  # why the compiled module could not be imported when the options were made


def pytest_addoption(parser):
    g = parser.getgroup("dlpack-validate", "DLPack conformance (dlpack-validate)")
    g.addoption("--dlpack-validate", dest="dlpv_subjects", action="extend", nargs="+", default=[],
                metavar="PKG",
                help="collect the dlpack-validate cases for these packages (import names or MODULE:ATTR "
                     "adapters), one item per case and package")
    rows, unusable = _table_options()
    for o in rows:
        names = ["--dlpack-validate-" + o["flag"][2:]] + _OLD_NAMES.get(o["name"], [])
        help_text = f"the validator's {o['flag']}: {o['help']}"
        if o["type"] == "flag":
            g.addoption(*names, dest="dlpv_" + o["name"], action="store_true", help=help_text)
        elif o["type"] == "globs":
            g.addoption(*names, dest="dlpv_" + o["name"], action="append", default=[], metavar=o["metavar"],
                        help=help_text)
        else:
            g.addoption(*names, dest="dlpv_" + o["name"], metavar=o["metavar"], help=help_text)
    parser.addini("dlpack_validate", type="args", default=[],
                  help="packages to validate, as --dlpack-validate (e.g. in pyproject.toml)")
    if unusable:
        _UNUSABLE.append(unusable)


def _values(config, which):
    """The table options given in this session, as the harness takes them (name -> texts):
    ``which`` "select" (the globs, applied at collection), "run" (what a chunk's run needs)
    or "reports" (the report paths and what rendering them needs)."""
    from . import _dlpack_validate
    outputs = {f["option"] for f in _dlpack_validate.formats()} | {"write_baseline"}
    out = {}
    for o in _table_options()[0]:
        value = config.getoption("dlpv_" + o["name"], None)
        if value is None or value is False or value == []:
            continue
        if which == "select" and o["type"] != "globs":
            continue
        if which == "run" and (o["type"] == "globs" or o["name"] in outputs or "run" not in o["commands"]):
            continue
        if which == "reports" and "report" not in o["commands"]:
            continue
        out[o["name"]] = ["1"] if value is True else [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return out


def _subjects(config):
    return list(config.getoption("dlpv_subjects") or []) or list(config.getini("dlpack_validate") or [])


def pytest_configure(config):
    config.addinivalue_line("markers", "dlpack(requirements, strength): a dlpack-validate case")
    config.addinivalue_line("markers", "dlpack_must: a dlpack-validate case of a MUST requirement")
    config.addinivalue_line("markers", "dlpack_should: a dlpack-validate case of a SHOULD requirement")
    if not _subjects(config):
        return
    if _UNUSABLE:
        raise pytest.UsageError(f"--dlpack-validate: the validator's compiled module cannot be imported: {_UNUSABLE[0]}")
    state = _State(config)
    config.stash[_KEY] = state
    if config.pluginmanager.hasplugin("xdist") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_XdistController(state), "dlpack-validate-xdist")


def pytest_unconfigure(config):
    state = config.stash.get(_KEY, None)
    if state is not None:
        state.cleanup()


_KEY = pytest.StashKey()


class _XdistController:
    """On the xdist controller: every worker gets the session's shared folder."""

    def __init__(self, state):
        self.state = state

    def pytest_configure_node(self, node):
        node.workerinput["dlpv_dir"] = self.state.dir


class _State:
    """The session's cases, chunks and records. On the controller (or without xdist) it owns
    the shared folder and writes the reports at the end; on an xdist worker it uses the
    controller's folder."""

    def __init__(self, config):
        self.config = config
        self.subjects = _subjects(config)
        self.worker = getattr(config, "workerinput", None)
        if self.worker and self.worker.get("dlpv_dir"):
            self.dir, self.owner = self.worker["dlpv_dir"], False
        else:
            self.dir, self.owner = tempfile.mkdtemp(prefix="dlpack-validate-pytest-"), True
        self.items = []        # this process's selected case items, in order
        self.chunk_of = {}     # item key -> chunk index
        self.chunks = []       # [[key, ...], ...]
        self.results = {}      # key -> result dict
        self.waited = 0.0      # seconds this process spent in items' setup: running or waiting for batches
        # how to run the validator again from here (the record's invocation: the interpreter,
        # -P, and PYTHONPATH when the package is not installed); until a record says
        self.invocation = " ".join(shlex.quote(a) for a in _python() + ["-m", "validator"])

    def cleanup(self):
        if self.owner:
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- collection -------------------------------------------------------------------------
    def cases(self):
        """The planned cases (the command line's --list), in the validator's order."""
        from . import _dlpack_validate, adapters, api
        cfg = self.config
        values = dict(_values(cfg, "select"), list=["1"], quiet=["1"])
        path = os.path.join(self.dir, f"list-{os.getpid()}.json")
        values["json"] = [path]
        options = {"command": "run", "values": values, "subjects": list(self.subjects),
                   "command_line": ["pytest", "--dlpack-validate"] + list(self.subjects) + ["--list"],
                   "worker_command": [sys.executable, "-m", "validator"], "preflight": adapters.preflight}
        with api._Redirect(True) as out:
            rc = _dlpack_validate.run(options)
        if rc != 0:
            raise pytest.UsageError(f"--dlpack-validate: {out.message()}")
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def make_items(self, session):
        out = []
        n = len(self.subjects)
        for case in self.cases():
            pairs = [(s, p) for s in range(n) for p in range(n)] if case.get("role") == "pair" else \
                [(s, None) for s in range(n)]
            for s, p in pairs:
                out.append(CaseItem.from_parent(session, name=_name(case["id"], self.subjects, s, p),
                                                nodeid=f"{_ROOT}::{_name(case['id'], self.subjects, s, p)}",
                                                case=case, key=(case["id"], s, p)))
        return out

    def plan(self, items):
        """Cut the selected items into chunks: one without xdist, about four per worker with it."""
        self.items = [i for i in items if isinstance(i, CaseItem)]
        workers = int((self.worker or {}).get("workercount") or 1)
        size = len(self.items) if workers <= 1 else max(8, -(-len(self.items) // (4 * workers)))
        self.chunks = [[i.key for i in self.items[k:k + size]] for k in range(0, len(self.items), max(1, size))]
        for c, keys in enumerate(self.chunks):
            for key in keys:
                self.chunk_of[key] = c

    # ---- running ----------------------------------------------------------------------------
    def _path(self, c, what):
        return os.path.join(self.dir, f"chunk-{c:05d}.{what}")

    def _load(self, c):
        with open(self._path(c, "json"), encoding="utf-8") as f:
            record = json.load(f)
        self.invocation = record.get("invocation") or self.invocation
        for r in record.get("results", []):
            self.results[_key(r)] = r
        if record.get("not_run"):
            for nr in record["not_run"]:
                for k in self.chunks[c]:
                    self.results.setdefault(k, {"status": "error", "message": "not run: " + (nr.get("reason") or ""),
                                                "id": k[0], "subject": k[1], "peer": k[2]})

    def _run(self, c):
        from . import api
        cfg = self.config
        keys = self.chunks[c]
        ids = sorted({k[0] for k in keys})
        from . import _dlpack_validate
        keyword = {o["name"]: o["keyword"] for o in _dlpack_validate.options()}
        kw = {keyword[name]: texts[0] for name, texts in _values(cfg, "run").items()}
        kw.update(filters=[_glob_literal(i) for i in ids], json=self._path(c, "part"))
        try:
            record = api.run(self.subjects, **kw)
        except api.BadInput as e:
            raise pytest.UsageError(f"--dlpack-validate: {e}") from None
        # Only the items selected here (a case id runs for every subject and pair): the others
        # were deselected (-k, --deselect, --lf) and stay out of the record.
        wanted = set(keys)
        record["results"] = [r for r in record.get("results", []) if _key(r) in wanted]
        tmp = self._path(c, "tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f)
        os.replace(tmp, self._path(c, "json"))

    def _try_run(self, c, block):
        """Run chunk c unless it is done; with block, wait for whoever is running it."""
        if os.path.exists(self._path(c, "json")):
            return True
        fd = os.open(self._path(c, "lock"), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
            except BlockingIOError:
                return False
            if not os.path.exists(self._path(c, "json")):
                self._run(c)  # (a holder that died left no record: this process runs it)
            return True
        finally:
            os.close(fd)

    def result(self, key):
        if key in self.results:
            return self.results[key]
        c = self.chunk_of[key]
        if not self._try_run(c, block=False):
            # Another worker is running it: run a chunk nobody has started, then wait for it.
            for j in list(range(c + 1, len(self.chunks))) + list(range(0, c)):
                if not os.path.exists(self._path(j, "json")) and self._try_run(j, block=False):
                    break
            self._try_run(c, block=True)
        self._load(c)
        return self.results.get(key)

    # ---- the session's reports ---------------------------------------------------------------
    def write_reports(self):
        """On the controller (or without xdist): the chunks' records merged into one by the
        validator's own `report merge` (its command line: this pytest session's), which
        writes every report asked for (the report formats' options, --write-baseline)."""
        from . import _dlpack_validate, adapters, api
        cfg = self.config
        values = _values(cfg, "reports")
        outputs = [f["option"] for f in _dlpack_validate.formats()] + ["write_baseline"]
        asked = [(name, values[name][0]) for name in outputs if name in values]
        if not asked:
            return None
        parts = sorted(os.path.join(self.dir, f) for f in os.listdir(self.dir)
                       if f.startswith("chunk-") and f.endswith(".json"))
        if not parts:
            return None
        # Relative paths are the user's: from the directory pytest was started in.
        start = str(cfg.invocation_params.dir)
        for name, path in asked:
            values[name] = [os.path.join(start, path)]
        values["quiet"] = ["1"]
        options = {"command": "merge", "records": parts, "values": values, "subjects": [],
                   "command_line": ["pytest"] + [a for a in cfg.invocation_params.args],
                   "worker_command": [sys.executable, "-m", "validator"], "preflight": adapters.preflight}
        with api._Redirect(True) as out:
            rc = _dlpack_validate.run(options)
        if rc not in (0, 1):
            return f"the reports could not be written: {out.message()[-400:]}"
        return ", ".join(f"{name.replace('_', '-')} {path}" for name, path in asked)


def _python():
    """The interpreter that runs this session, with -P (Python >= 3.11) so that a checkout's
    top-level validator/ folder in the current directory cannot shadow the package."""
    return [sys.executable, "-P"] if sys.version_info >= (3, 11) else [sys.executable]


def _glob_literal(text):
    """A glob that matches exactly `text` (the validator's globs: * ? and [...] classes)."""
    return "".join(f"[{ch}]" if ch in "*?[]" else ch for ch in text)


def _key(result):
    """A result's item key: (case id, subject, peer); a pair case's peer is its subject when
    the record leaves it out (one subject: the subject paired with itself)."""
    peer = result.get("peer")
    if peer is None and result.get("role") == "pair":
        peer = result.get("subject")
    return (result.get("id"), result.get("subject"), peer)


def _name(case_id, subjects, s, p):
    if p is None or len(subjects) == 1:
        return f"{case_id}[{subjects[s]}]"
    return f"{case_id}[{subjects[s]}->{subjects[p]}]"


def _marker_name(req):
    return "dlpack_" + "".join(ch if ch.isalnum() else "_" for ch in req)


def pytest_generate_tests(metafunc):
    """The corpus's fixtures (validator.corpus, docs/corpus.md): a test that takes
    ``dlpack_edge_case`` runs once per legal case, one that takes ``dlpack_bad_case`` once per
    known-bad one; each gets an EdgeCase (``.check(from_dlpack)``, ``.producer()``), its id the
    case's. Active whenever the plugin is, with or without --dlpack-validate."""
    for name, legal in (("dlpack_edge_case", True), ("dlpack_bad_case", False)):
        if name in metafunc.fixturenames:
            from . import corpus
            metafunc.parametrize(name, corpus.cases(legal=legal), ids=lambda c: c.id)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """The cases join the collected items first, so that -k, -m, --deselect and --lf (which
    act after this) select among them as among any test."""
    state = config.stash.get(_KEY, None)
    if state is None:
        return
    made = state.make_items(session)
    for req in sorted({r for it in made for r in it.case.get("requirements", [])}):
        config.addinivalue_line("markers", f"{_marker_name(req)}: dlpack-validate cases of requirement {req}")
    for it in made:
        strength = (it.case.get("severity") or "").lower()
        it.add_marker(pytest.mark.dlpack(requirements=list(it.case.get("requirements", [])), strength=strength))
        if strength in ("must", "should"):
            it.add_marker(getattr(pytest.mark, f"dlpack_{strength}"))
        for req in it.case.get("requirements", []):
            it.add_marker(getattr(pytest.mark, _marker_name(req)))
    items.extend(made)
    # pytest counts what was collected from collect reports: without one for the cases, its
    # header read "collected 0 items / 986 deselected / -986 selected" after -k.
    config.hook.pytest_collectreport(report=pytest.CollectReport(_ROOT, "passed", None, list(made)))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    state = session.config.stash.get(_KEY, None)
    if state is not None:
        state.plan(session.items)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """An item's time is its case's own (the record's duration_s, in the call phase): the first
    item of a batch waits in its setup while the validator runs the whole batch, and JUnit would
    charge all of that to it. The batches' own time is in the terminal summary."""
    outcome = yield
    if not isinstance(item, CaseItem):
        return
    rep = outcome.get_result()
    if call.when == "setup":
        item.config.stash[_KEY].waited += rep.duration
        rep.duration = 0.0
    elif call.when == "call":
        rep.duration = float((item.result or {}).get("duration_s") or 0.0)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """The verdict is known before pytest's own setup reads the xfail markers: a baseline entry
    that matched becomes an xfail marker with its reason."""
    if not isinstance(item, CaseItem):
        return
    state = item.config.stash[_KEY]
    item.result = state.result(item.key)
    entry = (item.result or {}).get("baseline")
    if isinstance(entry, dict) and entry.get("reason"):
        # An "intermittent" entry's case passes now and then (docs/baselines.md): never a strict xfail.
        strict = (bool(entry.get("strict")) or bool(item.config.getoption("dlpv_strict", False))) \
            and not entry.get("intermittent")
        item.add_marker(pytest.mark.xfail(reason=f"baseline: {entry['reason']}", strict=strict))


def pytest_sessionfinish(session):
    state = session.config.stash.get(_KEY, None)
    if state is None or not state.owner:
        return
    state.written = state.write_reports()


def pytest_terminal_summary(terminalreporter, config):
    state = config.stash.get(_KEY, None)
    if state is None or not state.owner:
        return
    if state.chunks:
        terminalreporter.write_line(
            f"dlpack-validate: {sum(len(c) for c in state.chunks)} items in {len(state.chunks)} "
            f"batch{'es' if len(state.chunks) != 1 else ''}; {state.waited:.1f} s waiting for the validator "
            f"in this process (each item's time is its case's own)")
    written = getattr(state, "written", None)
    if written:
        terminalreporter.write_line(f"dlpack-validate: {written}")


def _skip(reason):
    """pytest.skip, reported at the item (not at this file's line) where pytest allows it."""
    try:
        raise pytest.skip.Exception(reason, _use_item_location=True)
    except TypeError:  # a pytest without the keyword
        pytest.skip(reason)


class CaseItem(pytest.Item):
    def __init__(self, *, case, key, **kw):
        super().__init__(**kw)
        self.case = case
        self.key = key
        self.result = None
        self.user_properties.append(("dlpack_requirements", ",".join(case.get("requirements", []))))
        self.user_properties.append(("dlpack_strength", case.get("severity", "")))

    def reportinfo(self):
        # Where the case is declared in dlpack-validate's source (the listing's source and line):
        # a skip or failure is reported there, as pytest reports a test at its def.
        source, line = self.case.get("source"), self.case.get("line")
        if source and line:
            return source, int(line) - 1, f"{_ROOT}: {self.name}"
        return self.session.config.rootpath / _ROOT, 0, f"{_ROOT}: {self.name}"

    def runtest(self):
        r = self.result if self.result is not None else self.config.stash[_KEY].result(self.key)
        if r is None:
            raise DLPackCaseFailure(f"{self.key[0]}: the validator returned no result for this case "
                                    f"(subject {self.key[1]}); see the run's record")
        st = r.get("status")
        if st in ("pass", "xpass"):
            return
        if st == "skip":
            _skip(_terminal(r.get("message") or "skipped"))
        if st == "warn":
            if self.config.getoption("dlpv_strict", False):
                raise DLPackCaseFailure(self._text(r, "warn (a SHOULD requirement not met; failing under "
                                                      "--dlpack-validate-strict)"))
            reqs = ", ".join(self.case.get("requirements", []))
            warnings.warn_explicit(DLPackWarning(_terminal(f"{self.key[0]} ({self.case.get('severity', '')} {reqs}): "
                                                           f"{r.get('message')}")), DLPackWarning, _ROOT, 0)
            return
        if st == "xfail":
            st = (r.get("baseline") or {}).get("expect") or "fail"
        raise DLPackCaseFailure(self._text(r, st))

    def _text(self, r, status):
        return _terminal(self._raw_text(r, status), one_line=False)

    def _raw_text(self, r, status):
        reqs = ", ".join(self.case.get("requirements", []))
        lines = [f"{self.key[0]}: {status} ({self.case.get('severity', '')} {reqs})",
                 f"  {self.case.get('title', '')}"]
        if r.get("message"):
            lines.append(f"  {r['message']}")
        for k in ("expected", "observed"):
            if r.get(k):
                lines.append(f"  {k}: {r[k]}")
        for chk in r.get("checks") or []:
            if chk.get("status") not in ("pass", "skip"):
                lines.append(f"  [{chk.get('requirement')}] {chk.get('status')}: {chk.get('message')}")
        if status == "crash":
            lines.append("  the library under test died in the validator's worker process; the validator did not, "
                         "and went on with the other cases")
        elif r.get("phase") and status in ("timeout", "error") and r["phase"] not in (r.get("message") or ""):
            lines.append(f"  phase: {r['phase']}")
        if r.get("output_tail"):
            lines.append("  the worker's last output:")
            lines += ["    " + ln for ln in r["output_tail"].rstrip().splitlines()[-15:]]
        subjects = self.config.stash[_KEY].subjects
        alone = [subjects[self.key[1]]] + ([subjects[self.key[2]]] if self.key[2] not in (None, self.key[1]) else [])
        lines.append("  run it alone: " + " ".join(shlex.quote(a) for a in
                                                     _python() + ["-m", "validator"] + alone
                                                     + ["--filter", self.key[0]]))
        if reqs:
            lines.append("  the requirement: " + " ".join(shlex.quote(a) for a in
                                                          _python() + ["-m", "validator", "explain",
                                                           self.case["requirements"][0]]))
        return "\n".join(lines)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, DLPackCaseFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)
