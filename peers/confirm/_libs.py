"""How each pinned library makes a float32 array and imports with its own from_dlpack: the
few calls the parametrised confirmation scripts need (python3 SCRIPT LIB)."""
import importlib
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402


def lib(name):
    """(make(np_array) -> library array, from_dlpack(obj, **kw) -> library array) for `name`."""
    if name == "numpy":
        return (lambda a: a), np.from_dlpack
    if name == "torch":
        torch = importlib.import_module("torch")
        return torch.from_numpy, torch.from_dlpack
    if name == "jax":
        jax = importlib.import_module("jax")
        jnp = importlib.import_module("jax.numpy")
        return (lambda a: jax.device_put(a)), jnp.from_dlpack
    if name == "cupy":
        cupy = importlib.import_module("cupy")
        return cupy.asarray, cupy.from_dlpack
    if name == "paddle":
        paddle = importlib.import_module("paddle")
        return paddle.to_tensor, paddle.from_dlpack
    if name == "tvm_ffi":
        tvm_ffi = importlib.import_module("tvm_ffi")
        return tvm_ffi.from_dlpack, tvm_ffi.from_dlpack
    if name == "array_api_strict":
        xp = importlib.import_module("array_api_strict")
        return xp.asarray, xp.from_dlpack
    if name == "tensorflow":
        tf = importlib.import_module("tensorflow")
        # tf.experimental.dlpack.from_dlpack takes a capsule
        return tf.constant, (lambda obj, **kw: tf.experimental.dlpack.from_dlpack(obj.__dlpack__()))
    if name == "mlx":
        mx = importlib.import_module("mlx.core")
        return mx.array, mx.from_dlpack
    if name == "pyarrow":
        pa = importlib.import_module("pyarrow")
        return (lambda a: pa.array(a) if a.ndim == 1 else pa.Tensor.from_numpy(a)), None
    if name == "dpnp":  # run with the oneAPI peer's interpreter (scripts/oneapi.sh: python-oneapi)
        dpnp = importlib.import_module("dpnp")
        return dpnp.asarray, dpnp.from_dlpack
    if name == "warp":
        wp = importlib.import_module("warp")
        wp.config.quiet = True  # the init greeting (older releases; newer ones: log_level)
        if hasattr(wp, "LOG_WARNING"):
            wp.config.log_level = wp.LOG_WARNING
        wp.init()
        return (lambda a: wp.array(a, device="cpu")), wp.from_dlpack
    if name == "onnxruntime":
        ort = importlib.import_module("onnxruntime")
        C = importlib.import_module("onnxruntime.capi._pybind_state")

        def make(a):  # a tensor ORT allocates, holding a's elements
            v = ort.OrtValue.ortvalue_from_shape_and_type(a.shape, a.dtype.type, "cpu", 0)
            v.update_inplace(np.ascontiguousarray(a))
            return v if hasattr(v, "__dlpack__") else v._ortvalue  # before 1.26 only the native one exports
        if hasattr(ort.OrtValue, "from_dlpack"):  # 1.26 and later
            return make, ort.OrtValue.from_dlpack
        # 1.21 to 1.25: the native from_dlpack takes a capsule (and an is_bool_tensor flag)
        return make, (lambda obj, **kw: C.OrtValue.from_dlpack(obj.__dlpack__(), False))
    if name == "awkward":  # generic mode (peers/generic-requirements.txt): arrays without __dlpack__
        ak = importlib.import_module("awkward")
        return ak.from_numpy, ak.from_dlpack
    if name == "ndonnx":  # generic mode: an Array-API namespace that speaks no DLPack (0.23)
        ndx = importlib.import_module("ndonnx")
        return ndx.asarray, ndx.from_dlpack
    raise SystemExit(f"unknown library {name}")
