"""A float32 tensor with 4 lanes (a vector element type) is imported instead of refused
(DTYPE-08, a SHOULD). Case: consumer.refuse.dtype.float32x4.legacy.   Usage: LIB"""
import ctypes
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

_, from_dlpack = lib(sys.argv[1])
p = Producer(np.arange(16, dtype=np.float32))  # 16 floats read as 4 elements of 4 lanes
p._m.dl_tensor.lanes = 4
p._shape[0] = 4
out = from_dlpack(p)
confirmed(f"{sys.argv[1]}: a float32x4 tensor was imported as {getattr(out, 'dtype', type(out))}")
