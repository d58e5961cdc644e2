"""Built-in adapter for NumPy (CPU only)."""
import math

import numpy as np

from .._dlpack_validate import pattern_bytes

_DTYPES = {
    (6, 8): np.bool_,
    (0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
    (1, 8): np.uint8, (1, 16): np.uint16, (1, 32): np.uint32, (1, 64): np.uint64,
    (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64,
    (5, 64): np.complex64, (5, 128): np.complex128,
}


def logical_array(dtype_key, shape, dt):
    """The compact row-major array whose element i is pattern element i (a fresh copy)."""
    n = math.prod(shape)
    return np.frombuffer(pattern_bytes(dtype_key, n), dtype=dt).reshape(shape).copy()


def lay_out(logical, layout, dtype_key):
    """A view of the same logical values in one of DESIGN §3's layouts."""
    shape, dt = logical.shape, logical.dtype
    if layout == "contiguous":
        return logical
    if not shape:
        raise NotImplementedError(f"layout {layout} needs ndim >= 1")
    if layout == "fortran":
        return np.asfortranarray(logical)
    if layout == "strided":
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype=dt)
        view = big[..., ::2]
        view[...] = logical
        return view
    if layout == "offset":
        buf = np.zeros(logical.size + 1, dtype=dt)
        buf[1:] = logical.ravel()
        return buf[1:].reshape(shape)
    if layout == "reversed":
        return logical[::-1].copy()[::-1]
    if layout == "broadcast":
        row = logical_array(dtype_key, shape[1:], dt)
        return np.lib.stride_tricks.as_strided(row, shape, (0,) + row.strides, writeable=True)
    raise NotImplementedError(f"unknown layout {layout!r}")


class Adapter:
    module_name = "numpy"

    def __init__(self):
        self.name = "numpy"
        self.version = np.__version__

    def dtypes(self):
        return {k: np.dtype(v) for k, v in _DTYPES.items()}

    def devices(self):
        return [(1, 0)]

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False):
        if tuple(device) != (1, 0):
            raise NotImplementedError(f"numpy arrays live on the CPU only, not {tuple(device)}")
        dt = _DTYPES.get(tuple(dtype_key))
        if dt is None:
            raise NotImplementedError(f"numpy has no dtype for DLPack (code, bits) {tuple(dtype_key)}")
        shape = tuple(int(s) for s in shape)
        a = lay_out(logical_array(dtype_key, shape, dt), layout, dtype_key)
        if read_only:
            a.flags.writeable = False
        return a

    def from_dlpack(self, obj, **kwargs):
        return np.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        return np.ascontiguousarray(array).tobytes()

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
