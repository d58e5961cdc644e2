"""dlpack-validate for Python packages: ``python -m validator PKG...``.

The checks are the C++ harness's (module ``_dlpack_validate``); this package parses the
options and turns package names into adapters (docs/adapters.md, ``validator.adapters``).
"""
from ._dlpack_validate import pattern, pattern_bytes, tool_version as __version__  # noqa: F401

__all__ = ["pattern", "pattern_bytes", "main"]


def main(argv=None):
    from .cli import main as _main
    return _main(argv)
