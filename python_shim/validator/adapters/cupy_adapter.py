"""Built-in adapter for CuPy (CUDA device 0), used only when cupy imports."""
import cupy

from .array_api import Adapter as _ArrayAPI


class Adapter(_ArrayAPI):
    def __init__(self):
        super().__init__(cupy, name="cupy", device=(2, 0))

    def to_bytes(self, array):
        return cupy.asnumpy(cupy.ascontiguousarray(array)).tobytes()

    def current_stream(self, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError("cupy has streams on CUDA devices only")
        with cupy.cuda.Device(int(device[1])):
            return cupy.cuda.get_current_stream().ptr
