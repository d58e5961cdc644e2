"""probecrash: a legacy consumer that dies (SIGSEGV) when from_dlpack is handed a versioned
capsule it did not ask for, as ONNX Runtime 1.21 to 1.30 do, and otherwise imports through NumPy.
The validator's load check that hands it such a capsule kills the worker: that death must be kept
once as the check's result (subject.load, CAP-09) while every case still runs
(tests/python/check_generic.py)."""
import ctypes

import numpy as np

from _wrapped import Array

__version__ = "0.1.0"

_name_of = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))


class _Handed:
    """The capsule already taken, handed on to NumPy's from_dlpack."""

    def __init__(self, capsule, device):
        self._capsule, self._device = capsule, device

    def __dlpack__(self, **_):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


def from_dlpack(x, /):
    capsule = x.__dlpack__()  # never asks for max_version: a legacy consumer
    if type(capsule).__name__ == "PyCapsule" and _name_of(capsule) == b"dltensor_versioned":
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    return Array(np.from_dlpack(_Handed(capsule, x.__dlpack_device__())))
