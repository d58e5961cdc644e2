"""Built-in adapter for MLX (the CPU backend, mlx-cpu), used only when mlx.core imports.
Arrays are made from NumPy arrays of the pattern (mx.array copies them compact; bfloat16 cast
from float32); the consumer under test is mlx.core.from_dlpack."""
import mlx.core as mx
import numpy as np

from . import _numpy_layouts as L

_NAMES = {
    (6, 8): "bool_", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (5, 64): "complex64",
    (4, 16): "bfloat16",
}


class Adapter(L.NumpyBacked):
    module_name = "mlx"

    def __init__(self):
        self.name = "mlx"
        self.version = mx.__version__
        mx.set_default_device(mx.cpu)

    def _dtype(self, key):
        name = _NAMES.get(key)
        return getattr(mx, name, None) if name else None

    def _wrap(self, a, key, device):
        if key == (4, 16):
            return mx.array(a.astype(np.float32)).astype(mx.bfloat16)
        return mx.array(a, dtype=self._dtype(key))  # without dtype=, float64 would become float32

    def _to_numpy(self, array):
        if array.ndim > 32:  # NumPy holds at most 32 (1.x) or 64 (2.x) dimensions: read it flat
            array = array.reshape(-1)
        if array.dtype == mx.bfloat16:
            return L.logical_from_float(np.array(array.astype(mx.float32)), (4, 16))
        return np.array(array)

    def from_dlpack(self, obj, **kwargs):
        return mx.from_dlpack(obj, **kwargs)
