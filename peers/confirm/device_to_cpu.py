"""DEV-08 (a MUST): from_dlpack(x, device=cpu) of a CUDA array raises something other than
BufferError ("If the array library does not support such cases at all, the function must raise
BufferError"), without asking the producer for a host copy (dl_device).
Case: python.consumer.device.to_cpu.   Usage: python3 device_to_cpu.py LIB CPU_DEVICE EXPECTED"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name, device, expected = sys.argv[1:4]
_, from_dlpack = lib(name)
if name == "array_api_strict":
    import array_api_strict
    device = array_api_strict.Device("CPU_DEVICE")
elif name == "jax":
    import jax
    device = jax.devices("cpu")[0]
p = Producer(np.arange(4, dtype=np.float32), device=(2, 0))
try:
    from_dlpack(p, device=device)
except Exception as e:  # noqa: BLE001
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    asked = [k.get("dl_device") for k in p.kwargs_seen]
    confirmed(f"{name}: device=cpu of a CUDA-labelled object -> {type(e).__name__}: {str(e)[:100]}; "
              f"dl_device passed to __dlpack__: {asked}")
else:
    raise AssertionError("imported it")
