"""Built-in adapter for PyArrow (a producer only: pyarrow has no from_dlpack), used only when
pyarrow imports. 1-d arrays are pyarrow Arrays (pa.array, compact); other shapes are
pyarrow.Tensor objects made from NumPy arrays of the pattern (pa.Tensor.from_numpy keeps the
NumPy strides). Both export through __dlpack__."""
import numpy as np
import pyarrow as pa

from . import _numpy_layouts as L

_TYPES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
          (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
          (2, 16): "float16", (2, 32): "float32", (2, 64): "float64"}


class Adapter(L.NumpyBacked):
    module_name = "pyarrow"
    LAYOUTS = ("contiguous", "fortran", "strided", "offset", "reversed", "broadcast")

    def __init__(self):
        self.name = "pyarrow"
        self.version = pa.__version__

    def _dtype(self, key):
        return _TYPES.get(key)

    def _wrap(self, a, key, device):
        if a.ndim == 1 and a.flags["C_CONTIGUOUS"]:
            return pa.array(a, type=getattr(pa, _TYPES[key])())
        try:
            return pa.Tensor.from_numpy(a)
        except pa.ArrowInvalid as e:  # a layout pyarrow cannot hold (negative strides): its answer, quoted
            raise NotImplementedError(f"pyarrow.Tensor.from_numpy refuses this layout: {e}") from None

    def _to_numpy(self, array):
        if isinstance(array, pa.Tensor):
            return array.to_numpy()
        return array.to_numpy(zero_copy_only=False)

    def unexportable(self):
        # Arrow stores booleans one bit per element; DLPack's kDLBool is one byte per element
        # (bits 8), so no DLPack dtype describes this buffer without a copy.
        return [("a bit-packed boolean pyarrow Array", pa.array([True, False, True], type=pa.bool_()))]
