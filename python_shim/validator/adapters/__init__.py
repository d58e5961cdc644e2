"""Adapters: how the validator makes, imports and reads arrays of a package (docs/adapters.md).

An adapter is any object with::

    name: str; version: str
    def dtypes(self) -> dict       # (code, bits) -> library dtype, for every dtype it can make
    def devices(self) -> list      # [(device_type, device_id), ...] it can allocate on
    def make(self, shape, dtype_key, device, layout="contiguous", read_only=False, values="plain")
    def from_dlpack(self, obj, **kwargs)   # the library's consumer entry point
    def to_bytes(self, array) -> bytes     # elements, row-major compact, on the host
    def is_writable(self, array)           # True / False / None (no such notion)

``make`` fills element i (row-major) with ``validator.pattern(dtype_key, n, values)[i]`` and raises
NotImplementedError for what it cannot make (reported as a skip). ``values`` is "plain" (the small
numbers) or "edge" (each dtype's extremes and special values: ``pattern_bytes(dtype_key, n,
"edge")``); an adapter whose make() has no ``values`` keyword is never asked for edge values (its
``.edge`` producer cases skip, saying so). Optional extra:
``unexportable(self) -> [(description, array[, requirement id]), ...]``: arrays whose data DLPack cannot
express (ERR-01). ``unavailable: str``: why the package cannot be exercised here (no device); with
``devices()`` empty, every case is a skip quoting it. ``cpu_device(self)``: the object to pass as
``from_dlpack(device=...)`` for the CPU (default the string ``"cpu"``). ``consumer_protocol = False``
(with ``consumer_protocol_note``): the library's consumer takes capsules only and the adapter calls
``__dlpack__`` for it, so the cases about the calling protocol skip with that note. ``current_stream(self, device) -> int``: the stream handle the library's
consumer computes on for ``device`` (e.g. ``torch.cuda.current_stream(i).cuda_stream``), for
STRM-07; it raises when there is none (no such device here).

``notes``: a list of strings the report shows among the subject's notes.

``resolve(spec)`` turns a package name, ``MODULE:ATTR`` or ``generic:PKG`` into an adapter (a
package with no adapter of its own falls back to the Array API adapter, else to generic mode:
``generic.py``); ``preflight`` checks a spec without importing the package (the supervisor never
imports it).
"""
import importlib
import importlib.util
import os

from .. import libraries

# Each library with an adapter of its own: the table validator/libraries.tsv.
BUILTIN = libraries.builtin()


class LoadError(Exception):
    """The subject cannot be loaded: bad input (exit code 2)."""


# ``generic:PKG``: PKG in generic mode (adapters/generic.py) even when it has a built-in adapter.
GENERIC = "generic:"


def _split(spec):
    if spec.startswith(GENERIC):
        return spec[len(GENERIC):], ""
    module, _, attr = spec.partition(":")
    return module, attr


def _interpreter():
    """sys.executable, and in a venv the environment too (its python links to the base one)."""
    import sys
    exe = sys.executable
    if sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        return f"{exe}, the environment {sys.prefix}"
    return os.path.realpath(exe)


def preflight(spec):
    """'' when ``spec`` names something importable, else the one-line reason. Only looks the
    module up (importlib.util.find_spec); a dotted name imports its parent package."""
    if _looks_like_plugin(spec):
        return (f"'{spec}' is a file path, not a Python package: a C plugin (a shared library) is "
                f"tested with the dlpack-validate command (dlpack-validate {spec}); python -m "
                f"validator takes package names (numpy, torch) or MODULE:ATTR")
    module, attr = _split(spec)
    if spec.startswith(GENERIC) and (not module or ":" in module):
        return f"'{spec}' names no package: generic mode is generic:PKG (e.g. generic:warp)"
    if not module or (":" in spec and not attr and not spec.startswith(GENERIC)):
        return f"'{spec}' is neither a package name nor MODULE:ATTR"
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError) as e:
        return f"cannot look up Python module '{module}': {e}"
    if found is None:
        return (f"no Python package or module named '{module}' for this interpreter "
                f"({_interpreter()})")
    return ""


def _looks_like_plugin(spec):
    """A path to a file, or a name ending like a shared library (libfoo.so, foo.so.1, foo.dylib)."""
    base = os.path.basename(spec)
    shared = base.endswith((".so", ".dylib", ".dll")) or ".so." in base
    return os.path.sep in spec or shared or (os.path.isfile(spec) and "." in base)


def _instantiate(obj):
    return obj() if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "make")) else obj


def _import(module):
    try:
        return importlib.import_module(module)
    except Exception as e:  # noqa: BLE001 - any import failure is bad input
        raise LoadError(f"cannot import '{module}': {type(e).__name__}: {e}") from e


def _generic(mod, spec, forced):
    """Generic mode for ``mod`` (adapters/generic.py), or the LoadError saying what is missing."""
    from . import generic
    fn, looked = generic.consumer_of(mod)
    name = mod.__name__
    if fn is None:
        if forced:
            raise LoadError(f"'{name}' has no from_dlpack for generic mode (looked for {looked}): generic mode "
                            f"makes its arrays with it; pass --adapter MODULE:ATTR (docs/adapters.md)")
        raise LoadError(f"'{name}' has no built-in adapter, is not an Array API namespace (needs from_dlpack, "
                        f"asarray, reshape) and has no from_dlpack for generic mode (looked for {looked}): "
                        f"nothing to make its arrays with; pass --adapter MODULE:ATTR (docs/adapters.md)")
    return _check(generic.Adapter(mod, forced_over=BUILTIN.get(name) if forced else None), spec)


def resolve(spec):
    """The adapter for ``spec`` (runs in worker processes only)."""
    module, attr = _split(spec)
    if spec.startswith(GENERIC):
        return _generic(_import(module), spec, forced=True)
    if attr:
        try:
            mod = importlib.import_module(module)
        except Exception as e:  # noqa: BLE001 - any import failure is bad input
            raise LoadError(f"cannot import '{module}': {type(e).__name__}: {e}") from e
        try:
            obj = getattr(mod, attr)
        except AttributeError as e:
            raise LoadError(f"module '{module}' has no attribute '{attr}'") from e
        return _check(_instantiate(obj), spec)
    if module in BUILTIN:
        try:
            importlib.import_module(module)
        except Exception as e:  # noqa: BLE001
            raise LoadError(f"cannot import '{module}': {type(e).__name__}: {e}") from e
        return _check(importlib.import_module(BUILTIN[module]).Adapter(), spec)
    mod = _import(module)
    if all(hasattr(mod, f) for f in ("from_dlpack", "asarray", "reshape")):
        from .array_api import Adapter
        return _check(Adapter(mod), spec)
    return _generic(mod, spec, forced=False)


def _check(adapter, spec):
    missing = [a for a in ("name", "version", "make") if not hasattr(adapter, a)]
    if missing:
        raise LoadError(f"the adapter for '{spec}' lacks {', '.join(missing)} (the adapter protocol: docs/adapters.md)")
    return adapter


def origin(adapter, spec):
    """A file that identifies the package (its __init__.py), for the report."""
    module, _ = _split(spec)
    for name in (getattr(adapter, "module_name", None), module):
        if not name:
            continue
        mod = __import__("sys").modules.get(name)
        if mod is not None and getattr(mod, "__file__", None):
            return os.path.realpath(mod.__file__)
    return spec
