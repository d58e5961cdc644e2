"""DEV-04 / ERR-07 / DTYPE-08 (SHOULDs): what a consumer raises for a tensor it cannot use.
Usage: python3 consumer_exception_type.py LIB WHAT EXPECTED_TYPE
  WHAT: vulkan (a kDLVulkan tensor) | cuda | opencl | metal | rocm | oneapi | webgpu | undefined
  (a tensor labelled with that device type, 999 for undefined; host memory under the label) |
  code200 (dtype code 200) | object (from_dlpack(object()))
  EXPECTED_TYPE: the exception's type name, or none (the tensor is imported, not refused)
Cases: python.consumer.device.foreign, python.consumer.device.unusable.*,
python.consumer.error.rejection_type, python.consumer.error.no_methods."""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name, what, expected = sys.argv[1:4]
_, from_dlpack = lib(name)
DEVICES = {"vulkan": 7, "cuda": 2, "opencl": 4, "metal": 8, "rocm": 10, "oneapi": 14, "webgpu": 15, "undefined": 999}
arg = {**{k: (lambda t=t: Producer(np.arange(4, dtype=np.float32), device=(t, 0))) for k, t in DEVICES.items()},
       "code200": lambda: Producer(np.arange(4, dtype=np.float32), dtype=(200, 32)),
       "object": lambda: object()}[what]()
try:
    from_dlpack(arg)
except Exception as e:  # noqa: BLE001 - the type is the finding
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    confirmed(f"{name}: {what} -> {type(e).__name__}: {str(e)[:120]}")
else:
    assert expected == "none", "imported it"
    confirmed(f"{name}: {what} is imported, not refused")
