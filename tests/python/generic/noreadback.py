"""noreadback: a package whose from_dlpack imports (through NumPy) into arrays that have no
__dlpack__ of their own, as Awkward Array's do. Generic mode cannot read such arrays back: every
case that needs a read-back is a skip saying so, never a finding (tests/python/check_generic.py)."""
import numpy as np

__version__ = "0.1.0"


class Array:
    """Holds the imported NumPy array; exports nothing."""

    def __init__(self, data):
        self._data = data


def from_dlpack(x, /, *, device=None, copy=None):
    kw = {k: v for k, v in (("device", device), ("copy", copy)) if v is not None}  # NumPy < 2 takes neither
    return Array(np.from_dlpack(x, **kw))
