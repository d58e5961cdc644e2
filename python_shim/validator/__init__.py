"""dlpack-validate for Python packages: ``python -m validator PKG...`` and ``validator.run``.

The checks are the C++ harness's (module ``_dlpack_validate``); this package parses the
options and turns package names into adapters (docs/adapters.md, ``validator.adapters``).

The Python API, for a library's own test suite (``pip install /path/to/dlpack-validate``)::

    import validator

    def test_dlpack():
        rec = validator.run(["mylib"], filters=["python.*"])   # the run record, a dict
        assert rec["summary"]["exit_code"] == 0, rec["summary"]

``validator.run(subjects, **keywords) -> dict`` takes the command line's options as keywords
(``validator.options()``: the one options table, with each keyword, default and help; quiet is
on by default here) and returns the record its ``--json`` writes
(docs/run-record.md; ``validator.formats()`` lists the report formats whose paths it also
takes): ``rec["summary"]`` (``exit_code``, ``verdict``, ``counts``,
``unexpected``), ``rec["results"]`` (one entry per case: ``id``, ``status``, ``message``, ...).
Nothing is printed on stdout unless ``quiet=False``. Bad input (what the command answers with
exit code 2: an unknown package, a filter matching nothing, ...) raises ``validator.BadInput``,
a ValueError; an internal error (exit code 3) ``validator.InternalError``.
"""
from ._dlpack_validate import formats, options, pattern, pattern_bytes, tool_version as __version__  # noqa: F401
from .api import BadInput, InternalError, run  # noqa: F401

__all__ = ["formats", "options", "pattern", "pattern_bytes", "main", "run", "BadInput", "InternalError"]


def main(argv=None):
    from .cli import main as _main
    return _main(argv)
