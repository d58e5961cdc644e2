#!/usr/bin/env python3
"""NumPy 1.23: exporting a big-endian (byte-swapped) array raises TypeError; NumPy 1.24 and later
raise BufferError.

DTYPE-04 / ERR-01 (SHOULD): data DLPack cannot describe is refused with BufferError. The Array
API standard: "__dlpack__ ... should raise a BufferError when the data cannot be exported as
DLPack". DLPack has no byte order, so a byte-swapped array cannot be exported without a copy.
Usage: python3 numpy_byteswapped_export_error.py  (with the release's interpreter)
Exit 0: TypeError; 1: BufferError (or no error)."""
import numpy as np

from _dl import verdict

x = np.arange(4, dtype=">f4")  # big-endian float32: not the machine's byte order
try:
    x.__dlpack__()
    raised = None
except Exception as e:  # noqa: BLE001  (the type is the finding)
    raised = e
verdict(isinstance(raised, TypeError) and not isinstance(raised, BufferError),
        f"numpy {np.__version__}: __dlpack__() of a big-endian float32 array raised "
        f"{type(raised).__name__ if raised else 'nothing'}: {raised}")
