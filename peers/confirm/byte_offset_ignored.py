"""A consumer that ignores DLTensor.byte_offset (LAYOUT-08, a MUST: element 0 lies at data +
byte_offset) reads the bytes at data instead. Here data points 64 bytes before the elements
0, 1, 2, 3 (filled with -1 there).
Cases: python.input.consumer.*.offset.* (the shrink names the offset layout alone).
Usage: python3 byte_offset_ignored.py LIB"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name = sys.argv[1]
_, from_dlpack = lib(name)
buf = np.full(16 + 4, -1.0, dtype=np.float32)
buf[16:] = np.arange(4)
p = Producer(buf[16:], byte_offset=64)
p.array = buf  # keep the whole buffer alive
y = from_dlpack(p)
got = y.asnumpy() if hasattr(y, "asnumpy") else np.asarray(y).copy()  # dpnp: its own host copy
if got.dtype == object and hasattr(y, "numpy"):  # no array protocol (onnxruntime's native OrtValue)
    got = y.numpy().copy()
del y
assert not np.array_equal(got, np.arange(4, dtype=np.float32)), f"reads {got}: byte_offset is honoured"
confirmed(f"{name}: with byte_offset 64 from_dlpack reads {got} (the bytes at data), not 0, 1, 2, 3")
