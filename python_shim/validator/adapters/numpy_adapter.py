"""Built-in adapter for NumPy (CPU only).

NumPy's own dtypes always; the ml_dtypes formats (bfloat16, fp8, ...) only where NumPy can
exchange them, i.e. where ``np.dtypes.register_dlpack_dtype`` exists (numpy PR 31256, NumPy
2.5): the adapter registers each format there, as ml_dtypes itself would. Elsewhere those cases
skip and say why."""
import numpy as np

from . import _numpy_layouts as L

_REGISTER = getattr(getattr(np, "dtypes", None), "register_dlpack_dtype", None)


def _registered():
    """(code, bits) -> dtype of the ml_dtypes formats registered for DLPack (empty without the API)."""
    if _REGISTER is None:
        return {}
    out = {}
    for key in L.ml_dtypes_names():
        dt = L.numpy_dtype(key)
        try:
            _REGISTER(key, dt)
        except (ValueError, TypeError):  # already registered (by ml_dtypes) or refused
            pass
        out[key] = dt
    return out


class Adapter:
    module_name = "numpy"

    def __init__(self):
        self.name = "numpy"
        self.version = np.__version__
        self._extra = _registered()

    def dtypes(self):
        out = {k: np.dtype(v) for k, v in L._BASE.items()}
        out.update(self._extra)
        return out

    def devices(self):
        return [(1, 0)]

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        if tuple(device) != (1, 0):
            raise NotImplementedError(f"numpy arrays live on the CPU only, not {tuple(device)}")
        key = tuple(dtype_key)
        if key not in self.dtypes():
            why = ""
            if key in L.ml_dtypes_names() and _REGISTER is None:
                why = (f" (ml_dtypes has it, but NumPy {np.__version__} has no np.dtypes.register_dlpack_dtype "
                       "to exchange it: numpy PR 31256, NumPy 2.5)")
            raise NotImplementedError(f"numpy has no DLPack-exchangeable dtype for (code, bits) {key}{why}")
        a = L.lay_out(L.logical(key, shape, values), layout, key, values)
        if read_only:
            a.flags.writeable = False
        return a

    def from_dlpack(self, obj, **kwargs):
        return np.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        return L.bytes_of(array, L.subbyte_bits(array.dtype))

    def is_writable(self, array):
        return bool(array.flags.writeable)

    def unexportable(self):
        # A view whose byte stride (6) is not a multiple of its itemsize (4): element strides
        # cannot express it.
        odd = np.lib.stride_tricks.as_strided(np.zeros(8, dtype=np.int32), shape=(3,), strides=(6,))
        return [
            ("a big-endian float32 array", np.arange(4, dtype=">f4"), "DTYPE-04"),
            ("an object array", np.array([1, None], dtype=object)),
            ("a long double (x87 80-bit) array", np.zeros(2, dtype=np.longdouble), "DTYPE-12"),
            ("a unicode string array", np.array(["a", "b"])),
            ("an int32 view with a 6-byte stride", odd, "LAYOUT-12"),
        ]
