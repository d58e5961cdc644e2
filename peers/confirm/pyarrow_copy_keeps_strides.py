"""pyarrow: Tensor.__dlpack__(copy=True) of a non-compact tensor (an int16 (32, 64) view of every
other column of a (32, 128) array: strides (256, 4) bytes) copies the first 4,096 bytes of the
source's span, as if it were compact, and describes the copy with the source's strides. Rows 0-15
read right through those strides; rows 16-31 are described past the copied bytes, so the capsule's
data, shape and strides do not read the array's values (LAYOUT-07, a MUST). The script reads only
within the copied 4,096 bytes.
Case: python.input.producer.int16.strided.k.loading.again.copy.
Usage: python3 pyarrow_copy_keeps_strides.py"""
import ctypes

import numpy as np
import pyarrow as pa

from _dl import managed, verdict

a = (np.arange(32 * 64) % 251 - 125).astype(np.int16).reshape(32, 64)
wide = np.zeros((32, 128), np.int16)
view = wide[:, ::2]
view[...] = a
t = pa.Tensor.from_numpy(view)
m = managed(t.__dlpack__(max_version=(1, 0), copy=True))
d = m.dl_tensor
strides = (d.strides[0], d.strides[1])
base = d.data + d.byte_offset
# The copy's first 4,096 bytes (as many as a compact copy of 2,048 int16 holds).
copied = np.ctypeslib.as_array((ctypes.c_int16 * a.size).from_address(base)).copy()
first_half = np.lib.stride_tricks.as_strided(copied, (16, 64), (strides[0] * 2, strides[1] * 2))
verdict(base != view.ctypes.data and strides == (128, 2) and np.array_equal(first_half, a[:16]),
        f"pyarrow {pa.__version__}: copy=True of an int16 (32, 64) tensor with strides {t.strides} bytes gives "
        f"a copy at {base:#x} (source {view.ctypes.data:#x}, flags {m.flags:#x}) described with strides "
        f"{strides} elements, the source's: rows 0-15 read right through them from the first 4,096 bytes "
        f"copied; row 16 starts at byte {16 * strides[0] * 2}, past the {a.nbytes} bytes a copy of "
        f"{a.size} int16 holds")
