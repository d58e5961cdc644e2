"""LAYOUT-13 (the refusal's kind, a warning): for an array that cannot be exported, the spec names
BufferError for both methods ("__dlpack__/__dlpack_device__ raise BufferError"). Here __dlpack__
of a plain float32 array refuses with BufferError and __dlpack_device__ raises EXPECTED_TYPE.
Cases: python.device.matches_capsule.
Usage: python3 device_query_type.py LIB EXPECTED_TYPE"""
import sys

import numpy as np

from _dl import confirmed
from _libs import lib

name, expected = sys.argv[1:3]
make, _ = lib(name)
x = make(np.arange(6, dtype=np.float32).reshape(2, 3))
try:
    x.__dlpack__()
except BufferError:
    pass
else:
    raise AssertionError("__dlpack__ exported the array: it is no array that cannot be exported")
try:
    answer = x.__dlpack_device__()
except Exception as e:  # noqa: BLE001 - the type is the finding
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    confirmed(f"{name}: __dlpack__ raises BufferError, __dlpack_device__ {type(e).__name__}: {str(e)[:100]}")
else:
    raise AssertionError(f"__dlpack_device__ answered {answer!r}")
