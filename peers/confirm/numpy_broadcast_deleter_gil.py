#!/usr/bin/env python3
"""NumPy 1.23: the deleter of an exported broadcast array (a zero stride) touches Python without
taking the GIL, so it dies when called without the GIL; NumPy 1.24 and later take it.

DEL-06 (MUST): the deleter can be called from any thread without the caller holding the GIL
(it acquires the GIL itself if it touches Python). DLPack's Python specification (v1.0, #140).

The export is consumed as a consumer does (the capsule renamed 'used_dltensor'), the capsule is
then the array's only owner, and the deleter is called through ctypes, which releases the GIL
around the call. The call is made in a child interpreter, so that a crash is reported, not
suffered.
Usage: python3 numpy_broadcast_deleter_gil.py [plain]  (with the release's interpreter; plain: a
contiguous array instead of a broadcast one: an audit found NumPy 1.23's deleter needs the GIL
for every array)
Exit 0: the deleter crashed; 1: it returned."""
import sys

import numpy

from _dl import child, verdict

CHILD = r'''
import ctypes
import numpy as np
from _dl import managed, rename
row = np.arange(4, dtype=np.float32)
x = np.lib.stride_tricks.as_strided(row, (3, 4), (0, row.itemsize), writeable=True)  # broadcast rows
if PLAIN:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
cap = x.__dlpack__()
del x, row
m = managed(cap)
rename(cap, "used_dltensor")
m.deleter(ctypes.addressof(m))  # a ctypes call: the GIL is released around it
print("returned")
'''

plain = sys.argv[1:2] == ["plain"]
p = child(f"PLAIN = {plain}\n" + CHILD)
died = p.returncode != 0
lines = p.stderr.strip().splitlines()
tail = next((line for line in lines if "Fatal Python error" in line), lines[-1] if lines else "")
verdict(died, f"numpy {numpy.__version__}: the deleter of a {'contiguous' if plain else 'broadcast'} array called "
        "without the GIL " + (f"crashed (exit {p.returncode}): {tail}" if died else "returned"))
