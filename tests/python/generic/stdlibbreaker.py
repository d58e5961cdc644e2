"""stdlibbreaker: a package that replaces parts of the interpreter's standard library when it is
imported (json.dumps and json.loads return garbage, gc.freeze and gc.collect raise), and otherwise
imports and exports as NumPy does. The validator's own work (its worker protocol, its collections
between cases) must not depend on what the package replaced: the run completes with a record and
no result is the validator's `error` (tests/python/check_generic.py)."""
import gc
import json

import numpy as np

from _wrapped import Array

__version__ = "0.1.0"


def _broken(*_a, **_k):
    raise KeyError("version")


json.dumps = lambda *_a, **_k: "garbage"
json.loads = _broken
gc.freeze = _broken
gc.collect = _broken


def from_dlpack(x, /):
    return Array(np.from_dlpack(x))
