"""Built-in adapter for CuPy (CUDA device 0), used only when cupy imports."""
import cupy

from .array_api import Adapter as _ArrayAPI


class Adapter(_ArrayAPI):
    def __init__(self):
        super().__init__(cupy, name="cupy", device=(2, 0))

    def to_bytes(self, array):
        return cupy.asnumpy(cupy.ascontiguousarray(array)).tobytes()
