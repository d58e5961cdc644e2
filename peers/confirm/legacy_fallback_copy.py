"""VER-11 (a SHOULD): copy=True is not dropped when a consumer falls back to a pre-2023.12
producer (a __dlpack__ that takes stream only, so the copy request cannot be passed on): the
consumer copies itself or refuses. Here from_dlpack(p, copy=True) returns the producer's memory.
Cases: python.consumer.legacy_fallback.copy.   Usage: python3 legacy_fallback_copy.py LIB"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib


class OldProducer(Producer):
    def __dlpack__(self, stream=None):  # the pre-2023.12 signature: no max_version, no copy
        self.kwargs_seen.append({"stream": stream})
        return self.capsule


def address(y):
    for attr in ("__array_interface__", "__sycl_usm_array_interface__", "__cuda_array_interface__"):
        if hasattr(y, attr):
            return getattr(y, attr)["data"][0]
    return y.data_ptr()


_, from_dlpack = lib(sys.argv[1])
p = OldProducer(np.arange(8, dtype=np.float32))
try:
    y = from_dlpack(p, copy=True)
except Exception as e:  # noqa: BLE001 - a refusal is the lawful other answer
    raise SystemExit(f"refused: {type(e).__name__}: {e}")
got = address(y)
assert got == p.array.ctypes.data, f"a copy at {got:#x} (the producer's data is at {p.array.ctypes.data:#x})"
confirmed(f"{sys.argv[1]}: from_dlpack(copy=True) of a stream-only producer returns its memory at {got:#x} "
          f"(calls: {p.kwargs_seen})")
