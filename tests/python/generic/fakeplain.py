"""fakeplain: the fake array library (tests/python/fakearray) seen as a package with no adapter:
a module with ``from_dlpack`` whose arrays have ``__dlpack__``, nothing else. ``python -m validator
fakeplain`` runs it in generic mode (validator/adapters/generic.py). FAKEPLAIN_BUGS (comma
separated names of fakearray.KNOWN_BUGS) plants bugs, as ``fakearray.variants:NAME`` does."""
import os

from fakearray import _fakearray

_fakearray.set_bugs(sorted(b for b in os.environ.get("FAKEPLAIN_BUGS", "").split(",") if b))

__version__ = "1.3.0"
from_dlpack = _fakearray.from_dlpack
