"""LAYOUT-10 (a SHOULD): a zero-size export keeps a non-NULL data pointer.
Cases: producer.shape.empty.legacy / .versioned.   Usage: python3 empty_data_not_null.py LIB"""
import sys

import numpy as np

from _dl import confirmed, managed
from _libs import lib

make, _ = lib(sys.argv[1])
x = make(np.zeros((0, 3), dtype=np.float32))
data = managed(x.__dlpack__()).dl_tensor.data
assert data, "data is NULL: the finding no longer holds"
confirmed(f"{sys.argv[1]}: a (0, 3) export has data = {data:#x}, not NULL")
