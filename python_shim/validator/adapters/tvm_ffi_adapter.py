"""Built-in adapter for apache-tvm-ffi, used only when tvm_ffi imports. Its tensors
(tvm_ffi.Tensor) wrap a NumPy array of the pattern zero-copy (tvm_ffi.from_dlpack), so every
layout NumPy can make is a tvm_ffi tensor with the same strides; the consumer under test is
tvm_ffi.from_dlpack. Reading back goes through NumPy (numpy.from_dlpack)."""
import numpy as np
import tvm_ffi

from . import _numpy_layouts as L


class Adapter(L.NumpyBacked):
    module_name = "tvm_ffi"
    LAYOUTS = ("contiguous", "fortran", "strided", "offset", "reversed", "broadcast")

    def __init__(self):
        self.name = "tvm_ffi"
        self.version = tvm_ffi.__version__

    def _dtype(self, key):
        return L._BASE.get(key)

    def _wrap(self, a, key, device):
        return tvm_ffi.from_dlpack(a)

    def _to_numpy(self, array):
        device = array.__dlpack_device__()
        if device[0] != 1:  # imported from another device (dpnp's kDLOneAPI): NumPy reads host memory only
            raise NotImplementedError(f"the tvm_ffi adapter reads CPU tensors back through NumPy; this one is on "
                                      f"device {tuple(device)}")
        try:
            return np.from_dlpack(array)
        except (BufferError, RuntimeError, TypeError, ValueError) as e:  # a dtype NumPy cannot hold
            try:
                dtype = str(array.dtype)
            except (RuntimeError, TypeError, ValueError) as why:  # a code tvm_ffi kept but cannot name (18)
                dtype = f"unnamed ({why})"
            raise NotImplementedError(f"NumPy cannot read back a tvm_ffi tensor of dtype {dtype}: {e}") from e

    def from_dlpack(self, obj, **kwargs):
        return tvm_ffi.from_dlpack(obj, **kwargs)
