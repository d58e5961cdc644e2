"""Arrays of the reference pattern built with NumPy, for adapters whose library can take a
NumPy array (a copy or a zero-copy wrap). Element types NumPy lacks come from ml_dtypes when it
is installed (bfloat16, the fp8/fp6/fp4 formats); `numpy_dtype` returns None for the rest."""
import math

import numpy as np

from .._dlpack_validate import pattern, pattern_bytes

_BASE = {
    (6, 8): np.bool_,
    (0, 8): np.int8, (0, 16): np.int16, (0, 32): np.int32, (0, 64): np.int64,
    (1, 8): np.uint8, (1, 16): np.uint16, (1, 32): np.uint32, (1, 64): np.uint64,
    (2, 16): np.float16, (2, 32): np.float32, (2, 64): np.float64,
    (5, 64): np.complex64, (5, 128): np.complex128,
}

# DLPack (code, bits) -> ml_dtypes attribute (DLPack 1.1 codes 7-17; bfloat16 is code 4).
_ML = {
    (4, 16): "bfloat16",
    (7, 8): "float8_e3m4", (8, 8): "float8_e4m3", (9, 8): "float8_e4m3b11fnuz",
    (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
    (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu",
    (15, 6): "float6_e2m3fn", (16, 6): "float6_e3m2fn", (17, 4): "float4_e2m1fn",
}


_ML_DTYPES = []  # [module or None], filled on first use


def _ml_dtypes():
    """The ml_dtypes module, or None. One that is installed but cannot be imported beside this
    NumPy (a partner's ml_dtypes built for NumPy 2 on a path whose NumPy is 1.23: "module
    'numpy' has no attribute 'exceptions'") is none at all: the validator's own helpers must
    never fail on it and have that charged to the library whose array they were reading."""
    if not _ML_DTYPES:
        try:
            import ml_dtypes
        except Exception:  # noqa: BLE001 (any failure to import is "not here")
            ml_dtypes = None
        _ML_DTYPES.append(ml_dtypes)
    return _ML_DTYPES[0]


def ml_dtypes_names():
    """(code, bits) -> ml_dtypes name, for the formats the importable ml_dtypes has."""
    ml_dtypes = _ml_dtypes()
    if ml_dtypes is None:
        return {}
    return {k: v for k, v in _ML.items() if hasattr(ml_dtypes, v)}


def numpy_dtype(dtype_key):
    """The NumPy dtype holding DLPack (code, bits) one element per item, or None."""
    key = tuple(dtype_key)
    if key in _BASE:
        return np.dtype(_BASE[key])
    name = ml_dtypes_names().get(key)
    if name:
        return np.dtype(getattr(_ml_dtypes(), name))
    return None


def logical(dtype_key, shape, values="plain"):
    """The compact row-major array whose element i is pattern element i (a fresh copy); values
    "edge": the edge pattern's element i."""
    dt = numpy_dtype(dtype_key)
    if dt is None:
        raise NotImplementedError(f"no NumPy dtype for DLPack (code, bits) {tuple(dtype_key)}")
    shape = tuple(int(s) for s in shape)
    n = math.prod(shape)
    out = placed(shape, dt)
    if dt.itemsize * 8 == dtype_key[1]:
        out[...] = np.frombuffer(pattern_bytes(dtype_key, n, values), dtype=dt).reshape(shape)
    else:
        # Sub-byte formats are stored one element per byte in NumPy: go through float32 values.
        out[...] = np.asarray(pattern(tuple(dtype_key), n, values), dtype=np.float32).astype(dt).reshape(shape)
    return out


# Where the adapters' NumPy buffers start: 16 bytes past a 64-byte boundary, which is where
# glibc's malloc puts NumPy's data in practice (a 16-byte chunk header; large blocks are mmap'd
# pages plus that header). Fixed rather than left to the heap, so that a consumer whose kernels
# need a wider alignment (DLPack promises none that can be relied on: LAYOUT-09) behaves the
# same way in every run.
BUFFER_MOD_64 = 16


def placed(shape, dt, order="C"):
    """A zeroed array of `shape` whose data starts BUFFER_MOD_64 bytes past a 64-byte boundary."""
    dt = np.dtype(dt)
    shape = tuple(int(s) for s in shape)
    nbytes = math.prod(shape) * dt.itemsize
    raw = np.zeros(nbytes + 128, dtype=np.uint8)
    start = (BUFFER_MOD_64 - raw.ctypes.data) % 64
    return raw[start:start + nbytes].view(dt).reshape(shape, order=order)


def logical_from_float(values, dtype_key):
    """float32 values (exact in every format for the pattern) as a NumPy array of (code, bits):
    how an adapter reads back a bfloat16/fp8 array its library can only convert to float32."""
    return np.asarray(values, dtype=np.float32).astype(numpy_dtype(dtype_key))


def lay_out(a, layout, dtype_key, values="plain"):
    """A view of the same logical values in one of the layouts of docs/design.md §3 (`values`:
    the pattern `a` holds, which a broadcast row is made of again)."""
    shape, dt = a.shape, a.dtype
    if layout == "contiguous":
        return a
    if not shape:
        raise NotImplementedError(f"layout {layout} needs ndim >= 1")
    if layout == "fortran":
        out = placed(shape, dt, order="F")
        out[...] = a
        return out
    if layout == "strided":
        big = placed(shape[:-1] + (2 * shape[-1],), dt)
        view = big[..., ::2]
        view[...] = a
        return view
    if layout == "offset":
        buf = placed((a.size + 1,), dt)
        buf[1:] = a.ravel()
        return buf[1:].reshape(shape)
    if layout == "reversed":
        out = placed(shape, dt)
        out[...] = a[::-1]
        return out[::-1]
    if layout == "broadcast":
        row = logical(dtype_key, shape[1:], values)
        return np.lib.stride_tricks.as_strided(row, shape, (0,) + row.strides, writeable=True)
    raise NotImplementedError(f"unknown layout {layout!r}")


def subbyte_bits(np_dtype):
    """4 or 6 for the ml_dtypes sub-byte formats (one element per byte in NumPy), else None."""
    for key, name in ml_dtypes_names().items():
        if key[1] < 8 and np.dtype(np_dtype).name == name:
            return key[1]
    return None


def bytes_of(np_array, bits=None):
    """Elements, row-major compact (what an adapter's to_bytes returns); sub-byte formats
    (`bits` 4 or 6, stored one per byte in NumPy) packed little bit-endian as DLPack lays them."""
    raw = np.ascontiguousarray(np_array).view(np.uint8).ravel()
    if not bits or bits % 8 == 0:
        return raw.tobytes()
    out = bytearray((raw.size * bits + 7) // 8)
    for i, v in enumerate(raw.tolist()):
        for b in range(bits):
            if (v >> b) & 1:
                bit = i * bits + b
                out[bit // 8] |= 1 << (bit % 8)
    return bytes(out)


class NumpyBacked:
    """An adapter whose library builds its arrays from NumPy arrays of the pattern: a subclass
    sets name/version/module_name and implements `_dtype(key)` (the library's dtype or None),
    `_wrap(np_array, key, device)` and `_to_numpy(array)`; LAYOUTS says which layouts it can
    make faithfully (the NumPy view is wrapped as it is), the rest are skips."""
    LAYOUTS = ("contiguous",)
    DEVICES = [(1, 0)]

    def dtypes(self):
        return {k: d for k in list(_BASE) + list(ml_dtypes_names()) if (d := self._dtype(k)) is not None}

    def devices(self):
        return list(self.DEVICES)

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        key = tuple(dtype_key)
        if tuple(device) not in self.devices():
            raise NotImplementedError(f"{self.name} adapter allocates on {self.devices()} only, not {tuple(device)}")
        if self._dtype(key) is None:
            raise NotImplementedError(f"{self.name} has no dtype for DLPack (code, bits) {key}")
        if layout not in self.LAYOUTS:
            raise NotImplementedError(f"the {self.name} adapter makes {', '.join(self.LAYOUTS)} arrays only, not {layout}")
        if read_only:
            raise NotImplementedError(f"{self.name} arrays have no read-only flag")
        return self._wrap(lay_out(logical(key, shape, values), layout, key, values), key, tuple(device))

    def to_bytes(self, array):
        a = self._to_numpy(array)
        return bytes_of(a, subbyte_bits(a.dtype))

    def is_writable(self, array):
        return None
