"""exits: arrays whose __dlpack__ raises SystemExit when asked for a copy (copy=True), and
otherwise export as NumPy does. SystemExit ends programs; it is no refusal of a request, and the
cases that ask for a copy must say so (tests/python/check_generic.py)."""
import numpy as np

__version__ = "0.1.0"


class Array:
    def __init__(self, data):
        self._data = data

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise SystemExit("exits: no copies here")
        kw = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}  # NumPy < 2 takes stream= only
        return self._data.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()


def from_dlpack(x, /, *, device=None, copy=None):
    kw = {k: v for k, v in (("device", device), ("copy", copy)) if v is not None}  # NumPy < 2 takes neither
    return Array(np.from_dlpack(x, **kw))
