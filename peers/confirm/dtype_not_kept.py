"""A consumer that imports a tensor of one element type as an array of another: MLX 0.32.4's
from_dlpack of a float64 tensor returns a float32 array (the values rounded), where an import
must hold the tensor's elements (LAYOUT-01, a MUST; a type the consumer cannot hold is refused:
DTYPE-08). Cases: python.input.consumer.float64.* (the shrink names the element type alone).
Usage: python3 dtype_not_kept.py LIB float64"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name, dtype = sys.argv[1], np.dtype(sys.argv[2])
_, from_dlpack = lib(name)
x = (np.arange(6) * 1.1).astype(dtype)
p = Producer(x)
y = from_dlpack(p)
got = np.asarray(y)
del y
assert got.dtype != dtype, f"the import keeps {dtype}: {got.dtype}"
confirmed(f"{name}: from_dlpack of a {dtype} tensor gives a {got.dtype} array ({got.tobytes()[:8].hex()}... "
          f"where the tensor holds {x.tobytes()[:8].hex()}...)")
