"""DEV-09 (a SHOULD): the Python specification says __dlpack__() and __dlpack_device__() "will be
called from within from_dlpack(), to query what device the array is on ... and to access the
data". This consumer takes a CPU tensor without asking __dlpack_device__ first.
Case: python.consumer.device.query_first.   Usage: python3 device_never_queried.py LIB"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib


class Recording(Producer):
    def __init__(self, array):
        super().__init__(array)
        self.calls = []

    def __dlpack__(self, **kw):
        self.calls.append("__dlpack__")
        return super().__dlpack__(**kw)

    def __dlpack_device__(self):
        self.calls.append("__dlpack_device__")
        return super().__dlpack_device__()


name = sys.argv[1]
_, from_dlpack = lib(name)
p = Recording(np.arange(4, dtype=np.float32))
y = from_dlpack(p)
assert "__dlpack__" in p.calls, f"__dlpack__ was never called: {p.calls}"
first = p.calls.index("__dlpack__")
assert "__dlpack_device__" not in p.calls[:first], f"__dlpack_device__ was asked first: {p.calls}"
del y
confirmed(f"{name}: from_dlpack of a CPU producer made the calls {p.calls}: no __dlpack_device__ before __dlpack__")
