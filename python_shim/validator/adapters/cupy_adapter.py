"""Built-in adapter for CuPy (CUDA device 0), used only when cupy imports. Without a usable
CUDA device (no GPU, or a driver too old for this CuPy's runtime) it declares no device and
says why: every case is then a skip with that reason, not a failure of CuPy."""
import cupy

from .array_api import Adapter as _ArrayAPI


def _why_unavailable():
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CUDARuntimeError and friends
        return f"no usable CUDA device for cupy {cupy.__version__}: {type(e).__name__}: {e}"
    return "" if n > 0 else "no CUDA device"


class Adapter(_ArrayAPI):
    def __init__(self):
        super().__init__(cupy, name="cupy", device=(2, 0))
        self.unavailable = _why_unavailable()

    def devices(self):
        return [] if self.unavailable else [(2, 0)]

    def to_bytes(self, array):
        return cupy.asnumpy(cupy.ascontiguousarray(array)).tobytes()

    def current_stream(self, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError("cupy has streams on CUDA devices only")
        with cupy.cuda.Device(int(device[1])):
            return cupy.cuda.get_current_stream().ptr
