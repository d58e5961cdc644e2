#!/usr/bin/env python3
"""NumPy main (2.6.0.dev0, 2026-08): a float8 dtype registered with np.dtypes.register_dlpack_dtype
is exported in a versioned capsule stamped DLPack 1.0, with a dtype code (kDLFloat8_e4m3fn = 10)
that DLPack defines only from 1.1.

VER-02 (SHOULD): the declared minor version covers the dtype codes used; codes 7-17 were added
in DLPack 1.1, so a consumer that trusts a 1.0 stamp cannot know them. NumPy's bundled dlpack.h
declares 1.0.
Imports NumPy and ml_dtypes (the package that provides the float8 type NumPy registers).
Exit 0: the behaviour shows (code >= 7 under a 1.0 stamp); 1: it does not; 2: this NumPy has no
np.dtypes.register_dlpack_dtype (before the main branch of 2026)."""
import ctypes
import sys

import ml_dtypes
import numpy as np

register = getattr(np.dtypes, "register_dlpack_dtype", None)
if register is None:
    print(f"numpy {np.__version__}: no np.dtypes.register_dlpack_dtype")
    sys.exit(2)
register((10, 8), np.dtype(ml_dtypes.float8_e4m3fn))  # kDLFloat8_e4m3fn, 8 bits


class Header(ctypes.Structure):  # DLManagedTensorVersioned up to its DLTensor's dtype
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("data", ctypes.c_void_p),
                ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
x = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
cap = x.__dlpack__(max_version=(1, 3))
h = Header.from_address(api.PyCapsule_GetPointer(cap, b"dltensor_versioned"))
print(f"numpy {np.__version__}: a registered float8_e4m3fn array exports dtype code {h.code} (bits {h.bits}) "
      f"in a capsule stamped {h.major}.{h.minor}")
sys.exit(0 if h.code >= 7 and (h.major, h.minor) < (1, 1) else 1)
