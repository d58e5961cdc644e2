#!/usr/bin/env python3
"""NumPy 1.23: exporting a big-endian (byte-swapped) array raises TypeError; NumPy 1.24 and later
raise BufferError.

DTYPE-04 / ERR-01 (SHOULD): data DLPack cannot describe is refused with BufferError. The Array
API standard: "__dlpack__ ... should raise a BufferError when the data cannot be exported as
DLPack". DLPack has no byte order, so a byte-swapped array cannot be exported without a copy.
Exit 0: the behaviour shows (TypeError); 1: it does not (BufferError)."""
import sys

import numpy as np

x = np.arange(4, dtype=">f4")  # big-endian float32: not the machine's byte order
try:
    x.__dlpack__()
    raised = None
except Exception as e:  # noqa: BLE001  (the type is the finding)
    raised = e
name = type(raised).__name__ if raised else "nothing"
print(f"numpy {np.__version__}: __dlpack__() of a big-endian float32 array raised {name}: {raised}")
sys.exit(0 if isinstance(raised, TypeError) and not isinstance(raised, BufferError) else 1)
