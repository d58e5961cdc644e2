"""DEV-06 (a MUST, array API `__dlpack__`, dl_device): "If the device type cannot be handled by
the producer, this function must raise BufferError". A CUDA array asked for on a device ordinal
that does not exist. Needs a CUDA GPU.
Case: python.device.dl_device_unserveable.   Usage: python3 cuda_dl_device.py LIB EXPECTED"""
import sys

from _dl import confirmed

name, expected = sys.argv[1:3]
if name == "torch":
    import torch
    x = torch.arange(6, dtype=torch.float32, device="cuda")
elif name == "cupy":
    import cupy
    x = cupy.arange(6, dtype=cupy.float32)
elif name == "jax":
    import jax
    import jax.numpy as jnp
    x = jax.device_put(jnp.arange(6, dtype=jnp.float32), jax.devices("gpu")[0])
else:
    raise SystemExit(f"no recipe for {name}")
try:
    x.__dlpack__(dl_device=(2, 999), max_version=(1, 3))
except Exception as e:  # noqa: BLE001
    chain = [c.__name__ for c in type(e).__mro__]
    assert type(e).__name__ == expected, f"{type(e).__name__} ({chain}): {e}"
    confirmed(f"{name}: a cuda:0 array, __dlpack__(dl_device=(2, 999)) -> {type(e).__name__} "
              f"(bases {chain[1:-2]}): {str(e)[:100]}")
else:
    raise AssertionError("exported it")
