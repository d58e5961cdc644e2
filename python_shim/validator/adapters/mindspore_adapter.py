"""Built-in adapter for MindSpore (the CPU device), used only when mindspore imports.

MindSpore's DLPack API is capsule-only: mindspore.utils.dlpack.to_dlpack(tensor) and
from_dlpack(capsule) (documented for Ascend; they work on the CPU). Its Tensor has no
__dlpack__, so the validator finds no Python producer and the producer cases skip saying so;
the consumer under test is mindspore.utils.dlpack.from_dlpack, fed the capsule that the
adapter asks for (consumer_protocol = False). Tensors are made compact from NumPy arrays of the
pattern (bfloat16 cast from float32) and read back with asnumpy()."""
import numpy as np
import mindspore as ms
from mindspore.utils import dlpack as ms_dlpack

from . import _numpy_layouts as L

_NAMES = {
    (6, 8): "bool_", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (5, 64): "complex64", (5, 128): "complex128", (4, 16): "bfloat16",
}
# float8_e4m3fn, float8_e5m2 and hifloat8 exist, but the CPU backend has no cast to them: not offered.


class Adapter(L.NumpyBacked):
    module_name = "mindspore"

    def __init__(self):
        self.name = "mindspore"
        self.version = ms.__version__
        if hasattr(ms, "set_device"):
            ms.set_device("CPU")
        else:
            ms.set_context(device_target="CPU")

    def _dtype(self, key):
        name = _NAMES.get(key)
        return getattr(ms, name, None) if name else None

    def _wrap(self, a, key, device):
        if key == (4, 16):
            return ms.Tensor(a.astype(np.float32)).astype(ms.bfloat16)
        return ms.Tensor(a, dtype=self._dtype(key))

    def _to_numpy(self, array):
        if array.dtype == ms.bfloat16:  # no NumPy form: its float32 values (exact), upper halves
            return (array.astype(ms.float32).asnumpy().view(np.uint32) >> 16).astype(np.uint16)
        return array.asnumpy()

    consumer_protocol = False
    consumer_protocol_note = ("mindspore.utils.dlpack.from_dlpack takes a capsule, not an object with __dlpack__: "
                              "the adapter calls __dlpack__() for it, so keywords, streams and call order are not "
                              "MindSpore's to judge")

    def from_dlpack(self, obj, **kwargs):
        if kwargs:
            raise TypeError(f"mindspore.utils.dlpack.from_dlpack takes no keywords ({', '.join(kwargs)})")
        return ms_dlpack.from_dlpack(obj.__dlpack__())
