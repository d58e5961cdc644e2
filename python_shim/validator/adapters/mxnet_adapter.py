"""Built-in adapter for Apache MXNet 1.x (the legacy line; CPU), used only when mxnet imports.

MXNet 1.x speaks legacy DLPack through capsules only: NDArray.to_dlpack_for_read/_for_write
export, mx.nd.from_dlpack(capsule) imports. Its NDArray has no __dlpack__, so the validator
finds no Python producer and the producer cases skip saying so; the consumer under test is
mx.nd.from_dlpack, fed the capsule that the adapter asks for (consumer_protocol = False).
Arrays are compact NDArrays made from NumPy arrays of the pattern (bfloat16 cast from float32)
and read back with asnumpy()."""
import numpy as np
import mxnet as mx
from mxnet.ndarray import ndarray as _nd

from . import _numpy_layouts as L

_BF16 = _nd._DTYPE_MX_TO_NP.get(12)  # MXNet's bfloat16: a NumPy record of one uint16, where it exists
_TYPES = {
    (6, 8): np.bool_, (0, 8): np.int8, (0, 32): np.int32, (0, 64): np.int64, (1, 8): np.uint8,
    (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64,
}


class Adapter(L.NumpyBacked):
    module_name = "mxnet"

    def __init__(self):
        self.name = "mxnet"
        self.version = mx.__version__

    def _dtype(self, key):
        if key == (4, 16):
            return _BF16
        return _TYPES.get(key) if _TYPES.get(key) in _nd._DTYPE_NP_TO_MX else None

    def _wrap(self, a, key, device):
        if key == (4, 16):
            return mx.nd.array(a.astype(np.float32), ctx=mx.cpu(), dtype=np.float32).astype(_BF16)
        return mx.nd.array(a, ctx=mx.cpu(), dtype=a.dtype)

    def _to_numpy(self, array):
        a = array.asnumpy()  # waits for MXNet's engine
        return a.view(np.uint16) if _BF16 is not None and a.dtype == _BF16 else a

    consumer_protocol = False
    consumer_protocol_note = ("mx.nd.from_dlpack takes a capsule, not an object with __dlpack__: the adapter calls "
                              "__dlpack__() for it, so keywords, streams and call order are not MXNet's to judge")

    def from_dlpack(self, obj, **kwargs):
        if kwargs:
            raise TypeError(f"mx.nd.from_dlpack takes no keywords ({', '.join(kwargs)})")
        return mx.nd.from_dlpack(obj.__dlpack__())
