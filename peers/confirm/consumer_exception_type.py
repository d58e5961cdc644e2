"""DEV-04 / ERR-07 / DTYPE-08 (SHOULDs): what a consumer raises for a tensor it cannot use.
Usage: python3 consumer_exception_type.py LIB WHAT EXPECTED_TYPE
  WHAT: vulkan (a kDLVulkan tensor) | cuda | opencl | metal | rocm | oneapi | webgpu | tpu | ascend
  | undefined (a tensor labelled with that device type, kDLTPU 19 and kDLAscend 21 from dlpack's main
  branch after 1.3, 999 for undefined; host memory under the label) |
  code200 (dtype code 200) | object (from_dlpack(object())) | plain (a plain float32 CPU tensor of
  4 elements: a consumer that refuses even that imports nothing) | scalar (a 0-d float32 CPU tensor
  with its shape and strides set) | float24, float32x4, float4_bits8, float6_bits8, opaque_handle
  (dtypes (2, 24), float32 with 4 lanes, (17, 8), (15, 8), (3, 64): consumer.refuse.dtype.*) |
  reversed, broadcast, fortran, strided (a float32 3x4 tensor with negative first strides, a zero
  first stride, column-major strides, every second element: consumer.layout.float32.*) |
  bool, complex64, complex128, float16, bfloat16, float8_e4m3fn, float6_e3m2fn, float4_e2m1fn,
  bcomplex32 (code 18, on dlpack's main branch after 1.3) (a compact
  tensor of that dtype, data of the right size: consumer.roundtrip.*) | offset_odd (an int16 tensor
  whose data lies at an odd address, its elements 64 bytes on: byte_offset 64)
  EXPECTED_TYPE: the exception's type name, or none (the tensor is imported, not refused)
Cases: python.consumer.device.foreign, python.consumer.device.unusable.*,
python.consumer.error.rejection_type, python.consumer.error.no_methods, python.consumer.kw.any_object
(plain), consumer.roundtrip.scalar.* (scalar)."""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name, what, expected = sys.argv[1:4]
_, from_dlpack = lib(name)
DEVICES = {"vulkan": 7, "cuda": 2, "opencl": 4, "metal": 8, "rocm": 10, "oneapi": 14, "webgpu": 15, "tpu": 19, "ascend": 21,
           "undefined": 999}
# Raw bytes under another dtype label: (code, bits) for 16 bytes of zeros, 16 elements where
# the width is 8 bits.
DTYPES = {"float24": (2, 24), "bool": (6, 8), "float4_bits8": (17, 8), "float6_bits8": (15, 8), "opaque_handle": (3, 64),
          "complex64": (5, 64), "complex128": (5, 128), "float16": (2, 16), "bfloat16": (4, 16),
          "float8_e4m3fn": (10, 8), "float6_e3m2fn": (15, 6), "float4_e2m1fn": (17, 4), "bcomplex32": (18, 32)}
BASE = np.arange(24, dtype=np.float32)
# float32 3x4 views over BASE: (element offset of element 0, element strides).
LAYOUTS = {"reversed": (8, (-4, 1)), "broadcast": (0, (0, 1)), "fortran": (0, (1, 3)), "strided": (0, (8, 2))}


def layout(spec):
    start, strides = spec
    view = BASE[start:]
    p = Producer(view[:12].reshape(3, 4), strides=strides)
    p.array = BASE  # the whole buffer stays alive
    return p


def odd_offset():
    raw = np.zeros(2 * 16 + 64 + 2, dtype=np.uint8)
    elements = raw[65:65 + 32].view(np.int16)  # odd address: a view over raw bytes
    p = Producer(elements, byte_offset=64)
    p.array = raw
    return p


arg = {**{k: (lambda t=t: Producer(np.arange(4, dtype=np.float32), device=(t, 0))) for k, t in DEVICES.items()},
       "code200": lambda: Producer(np.arange(4, dtype=np.float32), dtype=(200, 32)),
       "object": lambda: object(),
       "plain": lambda: Producer(np.arange(4, dtype=np.float32)),
       "scalar": lambda: Producer(np.array(1.5, dtype=np.float32)),
       **{k: (lambda d=d: Producer(np.zeros(16, dtype=np.uint8), dtype=d)) for k, d in DTYPES.items()},
       "float32x4": lambda: Producer(np.zeros(16, dtype=np.float32), lanes=4),
       **{k: (lambda s=s: layout(s)) for k, s in LAYOUTS.items()},
       "offset_odd": odd_offset}[what]()
try:
    from_dlpack(arg)
except Exception as e:  # noqa: BLE001 - the type is the finding
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    confirmed(f"{name}: {what} -> {type(e).__name__}: {str(e)[:120]}")
else:
    assert expected == "none", "imported it"
    confirmed(f"{name}: {what} is imported, not refused")
