"""Built-in adapter for ONNX Runtime (onnxruntime, the CPU build), used only when onnxruntime
imports. Arrays are OrtValues over tensors ONNX Runtime allocates itself, always compact (its
tensors have no strides), filled with the pattern's bytes by OrtValue.update_inplace (a byte
copy, so bfloat16 needs no NumPy type); read back with OrtValue.numpy(), and the types it
cannot give back faithfully (bfloat16, float8, 4-bit) from the tensor's own buffer at data_ptr().

DLPack came to the CPU build's native OrtValue in 1.21 (__dlpack__, and
from_dlpack(capsule, is_bool_tensor)) and to the public onnxruntime.OrtValue in 1.26
(__dlpack__, from_dlpack(obj)). From 1.26 the arrays are onnxruntime.OrtValue and the consumer
under test is onnxruntime.OrtValue.from_dlpack; on 1.21 to 1.25 they are the native OrtValue and
the consumer is its from_dlpack, which takes a capsule only (consumer_protocol = False). Before
1.21 there is no DLPack: every case skips, saying so."""
import ctypes
import math

import numpy as np
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

from .._dlpack_validate import pattern_bytes

# DLPack (code, bits) -> ONNX TensorProto element type. ORT's DLPack export also lacks the
# float8 types it holds (17-20: "Unexpected data type"), so they are not offered.
_ONNX = {
    (6, 8): 9, (0, 8): 3, (0, 16): 5, (0, 32): 6, (0, 64): 7,
    (1, 8): 2, (1, 16): 4, (1, 32): 12, (1, 64): 13,
    (2, 16): 10, (2, 32): 1, (2, 64): 11, (4, 16): 16,
}
# Element types OrtValue.numpy() cannot give back as they are: it refuses bfloat16, and gives
# the 4-bit types one uint8 per element with only the packed bytes copied (the rest zero).
_RAW_BITS = {"tensor(bfloat16)": 16, "tensor(float4e2m1)": 4, "tensor(int4)": 4, "tensor(uint4)": 4,
             "tensor(float8e4m3fn)": 8, "tensor(float8e4m3fnuz)": 8, "tensor(float8e5m2)": 8,
             "tensor(float8e5m2fnuz)": 8}
_PUBLIC = hasattr(ort.OrtValue, "__dlpack__")  # 1.26 and later


class Adapter:
    module_name = "onnxruntime"

    def __init__(self):
        self.name = "onnxruntime"
        self.version = ort.__version__
        self.unavailable = "" if hasattr(C.OrtValue, "__dlpack__") else (
            f"onnxruntime {ort.__version__} has no DLPack (OrtValue.__dlpack__ came to the CPU build in 1.21)")
        if not _PUBLIC:
            self.consumer_protocol = False
            self.consumer_protocol_note = (
                "onnxruntime.capi.onnxruntime_pybind11_state.OrtValue.from_dlpack (the only consumer before 1.26) "
                "takes a capsule and an is_bool_tensor flag, not an object with __dlpack__: the adapter calls "
                "__dlpack__() for it, so keywords, streams and call order are not onnxruntime's to judge")

    def dtypes(self):
        return dict(_ONNX)

    def devices(self):
        return [] if self.unavailable else [(1, 0)]

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        key = tuple(dtype_key)
        if tuple(device) != (1, 0):
            raise NotImplementedError(f"the onnxruntime adapter allocates on the CPU only, not {tuple(device)}")
        if key not in _ONNX:
            raise NotImplementedError(f"onnxruntime has no exportable dtype for DLPack (code, bits) {key}")
        if layout != "contiguous":
            raise NotImplementedError(f"ONNX Runtime tensors are compact: no {layout} layout")
        if read_only:
            raise NotImplementedError("OrtValues have no read-only flag")
        shape = [int(s) for s in shape]
        raw = np.frombuffer(pattern_bytes(key, math.prod(shape), values), dtype=f"u{key[1] // 8}").reshape(shape)
        dev = C.OrtDevice(C.OrtDevice.cpu(), C.OrtDevice.default_memory(), 0)
        v = C.OrtValue.ortvalue_from_shape_and_onnx_type(shape, _ONNX[key], dev)
        v.update_inplace(np.ascontiguousarray(raw))
        return ort.OrtValue(v) if _PUBLIC else v

    if not _PUBLIC:
        def from_dlpack(self, obj, **kwargs):
            if kwargs:
                raise TypeError(f"OrtValue.from_dlpack takes no keywords ({', '.join(kwargs)})")
            return C.OrtValue.from_dlpack(obj.__dlpack__(), False)
    else:
        def from_dlpack(self, obj, **kwargs):
            return ort.OrtValue.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        bits = _RAW_BITS.get(array.data_type())
        if bits:  # no faithful NumPy type: the tensor's own buffer, as ORT packs it
            n = (math.prod(array.shape()) * bits + 7) // 8
            return ctypes.string_at(array.data_ptr(), n) if n else b""
        return np.ascontiguousarray(array.numpy()).tobytes()

    def is_writable(self, array):
        return None
