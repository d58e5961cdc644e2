#!/usr/bin/env python3
"""NumPy 1.23: the deleter of an exported broadcast array (a zero stride) touches Python without
taking the GIL, so it dies when called without the GIL; NumPy 1.24 and later take it.

DEL-06 (MUST): the deleter can be called from any thread without the caller holding the GIL
(it acquires the GIL itself if it touches Python). DLPack's Python specification (v1.0, #140).

The export is consumed as a consumer does (the capsule renamed 'used_dltensor'), the capsule is
then the array's only owner, and the deleter is called through ctypes, which releases the GIL
around the call. Run with the interpreter of the release in question; the call is made in a
child process so that a crash is reported, not suffered.
Usage: python3 numpy_broadcast_deleter_gil.py [plain]  (plain: a contiguous array instead of a
broadcast one; an audit found NumPy 1.23's deleter needs the GIL for every array).
Exit 0: the behaviour shows (the deleter crashed); 1: it does not (the deleter returned)."""
import subprocess
import sys

CHILD = r'''
import ctypes
import numpy as np
class M(ctypes.Structure):
    _fields_ = [("dl_tensor", ctypes.c_byte * 48), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]
api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
def export():
    row = np.arange(4, dtype=np.float32)
    x = np.lib.stride_tricks.as_strided(row, (3, 4), (0, row.itemsize), writeable=True)  # broadcast rows
    if PLAIN:
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
    return x.__dlpack__()
cap = export()
ptr = api.PyCapsule_GetPointer(cap, b"dltensor")
api.PyCapsule_SetName(cap, b"used_dltensor")
ctypes.CFUNCTYPE(None, ctypes.c_void_p)(M.from_address(ptr).deleter)(ptr)
print("returned")
'''

import numpy
plain = sys.argv[1:2] == ["plain"]
p = subprocess.run([sys.executable, "-c", f"PLAIN = {plain}\n" + CHILD], capture_output=True, text=True)
died = p.returncode != 0
tail = (p.stderr.strip().splitlines() or [""])[0]
print(f"numpy {numpy.__version__}: deleter of a {'contiguous' if plain else 'broadcast'} array called without the GIL: "
      + (f"crashed (exit {p.returncode}): {tail}" if died else "returned"))
sys.exit(0 if died else 1)
