"""Built-in adapter for NVIDIA Warp (warp-lang), on its "cpu" device, used only when warp imports.
Contiguous arrays are copies of the pattern into memory Warp allocates; the other layouts wrap
NumPy views of the pattern without a copy (wp.array(..., copy=False) keeps the NumPy strides,
negative and zero ones included: a Warp array with those strides). Warp has no 0-d arrays (it
makes shape (1,)), at most 4 dimensions and no complex types; bfloat16 (newer releases) is made
when ml_dtypes is installed. The consumer under test is warp.from_dlpack; read-back is Warp's
own array.numpy()."""
import numpy as np
import warp as wp

from . import _numpy_layouts as L

_NAMES = {
    (6, 8): "bool", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (4, 16): "bfloat16",
}
_MAX_DIMS = 4  # warp.types.ARRAY_MAX_DIMS (its native array struct holds 4 extents)


class Adapter(L.NumpyBacked):
    module_name = "warp"
    LAYOUTS = ("contiguous", "fortran", "strided", "offset", "reversed", "broadcast")

    def __init__(self):
        # Noise off (named in docs/adapters.md): wp.init() prints a greeting (version, devices,
        # kernel cache) into every worker's output tail. quiet (older releases) and log_level
        # (newer) only gate those INFO lines; warnings and errors still print.
        wp.config.quiet = True
        if hasattr(wp, "LOG_WARNING"):
            wp.config.log_level = wp.LOG_WARNING
        wp.init()
        self.name = "warp"
        self.version = getattr(wp, "__version__", None) or wp.config.version  # no __version__ before 0.11

    def _dtype(self, key):
        name = _NAMES.get(key)
        if key == (4, 16) and L.numpy_dtype(key) is None:
            return None  # the pattern's bfloat16 values come from ml_dtypes
        return getattr(wp, name, None) if name else None

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        shape = tuple(int(s) for s in shape)
        if not shape:
            raise NotImplementedError("Warp has no 0-d arrays (a scalar becomes shape (1,))")
        if len(shape) > _MAX_DIMS:
            raise NotImplementedError(f"Warp arrays have at most {_MAX_DIMS} dimensions, not {len(shape)}")
        if tuple(dtype_key) == (4, 16) and hasattr(wp, "bfloat16") and self._dtype((4, 16)) is None:
            raise NotImplementedError("the warp adapter makes bfloat16 arrays from ml_dtypes' bfloat16 (not installed)")
        return super().make(shape, dtype_key, device, layout, read_only, values)

    def _wrap(self, a, key, device):
        # Contiguous arrays are Warp's own (a copy into memory Warp allocates, or none at all for
        # zero elements); the other layouts wrap the NumPy view, strides kept, without a copy.
        own = a.flags["C_CONTIGUOUS"]
        if key == (4, 16):  # raw 16-bit words, viewed as bfloat16 (dtype=bfloat16 would convert values)
            return wp.array(a.view(np.uint16), dtype=wp.uint16, device="cpu", copy=own).view(wp.bfloat16)
        return wp.array(a, dtype=self._dtype(key), device="cpu", copy=own)

    def _to_numpy(self, array):
        if array.dtype is getattr(wp, "bfloat16", None):
            try:
                bits = array.numpy(_suppress_bfloat16_warning=True)
            except TypeError:
                bits = array.numpy()
            return np.ascontiguousarray(bits).view(np.uint16)  # raw bits, or ml_dtypes' view of them
        return array.numpy()

    def from_dlpack(self, obj, **kwargs):
        return wp.from_dlpack(obj, **kwargs)
