"""tvm_ffi: from_dlpack uses an object's __dlpack_c_exchange_api__ without checking the table's
major version (XAPI-07, a MUST: "the consumer must check major version compatibility before
using this struct"), and looks the attribute up on the instance, not the type (XAPI-19).
Cases: python.xapi.consumer.major_check, python.xapi.consumer.type_lookup."""
import ctypes

import numpy as np
import tvm_ffi

from _dl import Producer, confirmed

calls = []
F = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
trap = F(lambda a, b: calls.append("called") or -1)


class Header(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p)]


class Table(ctypes.Structure):  # a major-2 table: its layout is unknown to a 1.x consumer
    _fields_ = [("header", Header)] + [(n, F) for n in ("alloc", "from_py", "to_py", "dlt", "stream")]


table = Table(Header(2, 0, None), trap, trap, trap, trap, trap)
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule = ctypes.pythonapi.PyCapsule_New(ctypes.addressof(table), b"dlpack_exchange_api", None)
lookups = []


class Obj:
    def __init__(self):
        self._p = Producer(np.arange(4, dtype=np.float32))

    def __getattribute__(self, name):
        if name == "__dlpack_c_exchange_api__":
            lookups.append("instance")
        return object.__getattribute__(self, name)

    def __dlpack__(self, **kw):
        return object.__getattribute__(self, "_p").__dlpack__(**kw)

    def __dlpack_device__(self):
        return (1, 0)


Obj.__dlpack_c_exchange_api__ = capsule
try:
    tvm_ffi.from_dlpack(Obj())
except Exception:  # noqa: BLE001 - the trap returns -1
    pass
assert calls, "no function of the major-2 table was called"
confirmed(f"tvm_ffi called a function of a major-2 exchange table ({len(calls)} call(s)); attribute lookups: {lookups}")
