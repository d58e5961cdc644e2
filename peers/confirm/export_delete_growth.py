"""DEL-01 (a MUST): the deleter frees what the export allocated. Heap growth (glibc mallinfo2's
in-use bytes) over many legacy export + delete cycles of one array, after a warm-up, with the
capsule consumed and its deleter called as a consumer would.
Cases: producer.deleter.frees.legacy, producer.deleter.frees.bool.legacy.
Usage: python3 export_delete_growth.py LIB [CYCLES] [versioned|copy] [DTYPE]
(copy: versioned exports with copy=True, DEL-11: producer.deleter.frees_copy.*)"""
import ctypes
import gc
import sys

import numpy as np

from _dl import confirmed, heap_in_use as in_use, managed, _api
from _libs import lib


_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int


name = sys.argv[1]
cycles = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
mode = sys.argv[3] if len(sys.argv) > 3 else "legacy"
versioned = mode in ("versioned", "copy")
dtype = sys.argv[4] if len(sys.argv) > 4 else "float32"
make, _ = lib(name)
x = make((np.arange(12) % 2).astype(dtype).reshape(3, 4))
kw = {"max_version": (1, 3)} if versioned else {}
if mode == "copy":
    kw["copy"] = True
used = b"used_dltensor_versioned" if versioned else b"used_dltensor"


def cycle():
    cap = x.__dlpack__(**kw)
    m = managed(cap)
    _api.PyCapsule_SetName(cap, used)  # consumed: its deleter is now ours to call
    if m.deleter:
        m.deleter(ctypes.addressof(m))
    del m, cap


for _ in range(2000):
    cycle()
gc.collect()
before = in_use()
for _ in range(cycles):
    cycle()
gc.collect()
growth = in_use() - before
per = growth / cycles
assert per >= 16, f"{growth} bytes over {cycles} cycles ({per:.1f} per cycle): no leak"
confirmed(f"{name}: {growth} bytes of heap grew over {cycles} {mode} {dtype} export + delete cycles "
          f"({per:.1f} bytes per cycle)")
