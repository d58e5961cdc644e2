"""A dpnp array (kDLOneAPI, a SYCL device) handed to a CPU library's from_dlpack.

DEV-04 (SHOULD): a consumer "raises BufferError for a device it cannot use"; DEV-08 (MUST):
from_dlpack(x, device=cpu) brings the data to the host, and "if the array library does not
support such cases at all, the function must raise BufferError". This script hands the dpnp
array itself (no stand-in) to LIB's from_dlpack, with no device (MODE default) or the CPU
device (MODE to_cpu), and checks that LIB raises EXPECTED; it prints what dpnp was asked for.
Case: python.pair.device.default / python.pair.device.to_cpu (dpnp as producer).
Usage: python-oneapi cross_device.py LIB MODE EXPECTED   (LIB: numpy, torch or jax; the peers'
site-packages on DLPV_LAYER_SITE, as tests/peers sets it)."""
import sys

import dpnp

from _dl import confirmed
from _libs import lib

name, mode, expected = sys.argv[1:4]
_, from_dlpack = lib(name)
x = dpnp.arange(12, dtype="float32").reshape(3, 4)
assert tuple(int(v) for v in x.__dlpack_device__()) == (14, 0), x.__dlpack_device__()
asked = []
real = type(x).__dlpack__


def recording(self, **kw):  # what the consumer asks of dpnp (the array is dpnp's own)
    asked.append(kw)
    return real(self, **kw)


type(x).__dlpack__ = recording
kw = {}
if mode == "to_cpu":
    if name == "jax":
        import jax
        kw["device"] = jax.devices("cpu")[0]
    else:
        kw["device"] = "cpu"
try:
    y = from_dlpack(x, **kw)
except Exception as e:  # noqa: BLE001
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    confirmed(f"{name}.from_dlpack(dpnp array on kDLOneAPI{', device=cpu' if kw else ''}) -> "
              f"{type(e).__name__}: {str(e)[:90]}; dpnp was asked: {asked}")
else:
    raise AssertionError(f"imported it: {type(y)}")
