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
    raise SystemExit(f"unknown library {name}")
