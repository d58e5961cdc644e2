"""Built-in adapter for PyTorch (CPU; CUDA devices when torch.cuda is available)."""
import math

import torch
import torch.utils.dlpack

from .._dlpack_validate import pattern_bytes

_DTYPES = {
    (6, 8): torch.bool,
    (0, 8): torch.int8, (0, 16): torch.int16, (0, 32): torch.int32, (0, 64): torch.int64,
    (1, 8): torch.uint8,
    (2, 16): torch.float16, (2, 32): torch.float32, (2, 64): torch.float64,
    (4, 16): torch.bfloat16,
    (5, 64): torch.complex64, (5, 128): torch.complex128,
}
# Newer element types, where this torch has them (unsigned ints from 2.3, fp8 formats; DLPack
# codes of DLPack 1.1). torch's float4_e2m1fn_x2 packs two elements per item (lanes 2): not a
# (code, bits) key of the adapter protocol, so not offered.
for _key, _name in {(1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
                    (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2",
                    (13, 8): "float8_e5m2fnuz", (14, 8): "float8_e8m0fnu"}.items():
    if hasattr(torch, _name):
        _DTYPES[_key] = getattr(torch, _name)


def _logical(dtype_key, shape, dt, device, values="plain"):
    n = math.prod(shape)
    raw = bytearray(pattern_bytes(dtype_key, n, values))
    flat = torch.frombuffer(raw, dtype=dt) if n else torch.empty(0, dtype=dt)
    return flat.reshape(shape).clone().to(device)


class Adapter:
    module_name = "torch"

    def __init__(self):
        self.name = "torch"
        self.version = torch.__version__

    def dtypes(self):
        return dict(_DTYPES)

    def devices(self):
        out = [(1, 0)]
        if torch.cuda.is_available():
            out += [(2, i) for i in range(torch.cuda.device_count())]
        return out

    def _device(self, device):
        device = tuple(device)
        if device == (1, 0):
            return torch.device("cpu")
        if device[0] == 2 and device in self.devices():
            return torch.device("cuda", device[1])
        raise NotImplementedError(f"this torch cannot allocate on device {device}")

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        dt = _DTYPES.get(tuple(dtype_key))
        if dt is None:
            raise NotImplementedError(f"torch has no dtype for DLPack (code, bits) {tuple(dtype_key)}")
        if read_only:
            raise NotImplementedError("torch tensors have no read-only flag")
        dev = self._device(device)
        shape = tuple(int(s) for s in shape)
        logical = _logical(dtype_key, shape, dt, dev, values)
        if layout == "contiguous":
            return logical
        if not shape:
            raise NotImplementedError(f"layout {layout} needs ndim >= 1")
        if layout == "fortran":
            order = list(range(len(shape)))[::-1]
            return logical.permute(order).contiguous().permute(order)
        if layout == "strided":
            big = torch.zeros(shape[:-1] + (2 * shape[-1],), dtype=dt, device=dev)
            view = big[..., ::2]
            view.copy_(logical)
            return view
        if layout == "offset":
            buf = torch.zeros(logical.numel() + 1, dtype=dt, device=dev)
            buf[1:] = logical.reshape(-1)
            return buf[1:].view(shape)
        if layout == "reversed":
            raise NotImplementedError("torch tensors cannot have negative strides")
        if layout == "broadcast":
            return _logical(dtype_key, shape[1:], dt, dev, values).expand(shape)
        raise NotImplementedError(f"unknown layout {layout!r}")

    def current_stream(self, device):
        if tuple(device)[0] != 2:
            raise NotImplementedError("torch has streams on CUDA devices only")
        if not torch.cuda.is_available():
            raise NotImplementedError("this torch has no CUDA device")
        return torch.cuda.current_stream(int(device[1])).cuda_stream

    def from_dlpack(self, obj, **kwargs):
        return torch.utils.dlpack.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        t = array.detach().cpu().contiguous().reshape(-1)
        if t.is_complex():
            t = torch.view_as_real(t).reshape(-1)
        return t.view(torch.uint8).numpy().tobytes()

    def is_writable(self, array):
        return None  # torch has no read-only tensors

    def unexportable(self):
        return [("a sparse COO tensor", torch.zeros(2, 2).to_sparse(), "LAYOUT-13")]
