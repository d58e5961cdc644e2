"""Generic adapter for an Array API namespace (a module with from_dlpack, asarray, reshape).
Reading back goes through NumPy (``numpy.asarray``), so such packages need NumPy interop."""
import math

from .._dlpack_validate import pattern

_NAMES = {
    (6, 8): "bool",
    (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
    (5, 64): "complex64", (5, 128): "complex128",
}


class Adapter:
    def __init__(self, xp, name=None, device=(1, 0)):
        self.xp = xp
        self.module_name = xp.__name__
        self.name = name or xp.__name__
        self.version = str(getattr(xp, "__version__", "unknown"))
        self._device = tuple(device)

    def dtypes(self):
        return {k: getattr(self.xp, v) for k, v in _NAMES.items() if hasattr(self.xp, v)}

    def devices(self):
        return [self._device]

    def _asarray(self, values, dt, shape):
        return self.xp.reshape(self.xp.asarray(values, dtype=dt), shape)

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        xp = self.xp
        if tuple(device) != self._device:
            raise NotImplementedError(f"{self.name} adapter allocates on {self._device} only")
        dt = self.dtypes().get(tuple(dtype_key))
        if dt is None:
            raise NotImplementedError(f"{self.name} has no dtype for DLPack {tuple(dtype_key)}")
        if read_only:
            raise NotImplementedError("the Array API has no read-only arrays")
        shape = tuple(int(s) for s in shape)
        if layout != "contiguous":
            # The standard has no way to ask for strides, and a library is free to copy in
            # permute_dims or asarray: an array claimed to be Fortran-ordered might not be, and
            # the producer would then be misjudged. Only the compact layout is certain.
            raise NotImplementedError(f"the generic Array API adapter cannot guarantee layout {layout!r} "
                                      "(the standard has no way to ask for strides)")
        return self._asarray(self._values(dtype_key, shape, values), dt, shape)

    @staticmethod
    def _values(dtype_key, shape, values="plain"):
        """The pattern as a NumPy array where NumPy has the dtype (its buffer placed as the NumPy
        adapters place theirs, so a library that wraps it without copying has data at a fixed
        alignment on every run), else as a Python list."""
        try:
            from . import _numpy_layouts as L
            if L.numpy_dtype(dtype_key) is not None:
                return L.logical(dtype_key, shape, values).ravel()
        except ImportError:  # no NumPy: the library gets a list
            pass
        return pattern(dtype_key, math.prod(shape), values)

    def cpu_device(self):
        """The namespace's CPU device object (for from_dlpack(device=...)): the inspection API's
        device whose name says CPU, else the string "cpu"."""
        info = getattr(self.xp, "__array_namespace_info__", None)
        if info is not None:
            try:
                for d in info().devices():
                    if "cpu" in str(d).lower():
                        return d
            except Exception:  # noqa: BLE001 - an optional API
                pass
        return "cpu"

    def from_dlpack(self, obj, **kwargs):
        return self.xp.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        import numpy
        try:
            a = numpy.asarray(array)
        except (TypeError, ValueError, RuntimeError):
            # Releases whose arrays refuse __array__ (array-api-strict 2.1 and 2.2): read them
            # through their own DLPack export instead.
            a = numpy.from_dlpack(array)
        return numpy.ascontiguousarray(a).tobytes()

    def is_writable(self, array):
        return None
