"""What `python -m validator generic:LIB` (docs/adapters.md, generic mode) reports as a consumer
failure, by generic mode's own route and nothing of the validator's: a tensor made here is imported
with LIB's from_dlpack, and the import is read back through the imported array's own __dlpack__
(its DLTensor read with ctypes: data + byte_offset, shape, strides). One behaviour per run:
- byte_offset (LAYOUT-08, a MUST: element 0 lies at data + byte_offset): tensors whose data points
  64 bytes before their elements (poison bytes 0xa5 there), as consumer.byte_offset.legacy,
  consumer.large.byte_offset.legacy and python.input.consumer.*.offset.* make them: confirmed
  when every one LIB imports reads back as the poison (a dtype it refuses counts for nothing);
- scalar (LAYOUT-06, a MUST: a 0-d tensor is imported, its one element at data + byte_offset),
  with shape and strides pointers set and NULL (consumer.roundtrip.scalar.legacy,
  consumer.scalar.null_shape.legacy): confirmed when both are refused or misread.
Exit 0 ("confirmed:") when the behaviour shows, 1 when it does not, 2 when LIB has no from_dlpack.
Usage: python3 generic_mode_readback.py LIB byte_offset|scalar"""
import ctypes
import gc
import math
import sys

import numpy as np

from _dl import Producer, managed, not_applicable, verdict
from _libs import lib

name = sys.argv[1]
_, from_dlpack = lib(name)
if from_dlpack is None:
    not_applicable(f"{name} has no from_dlpack")


def read_back(y):
    """y's elements through y's own export, row-major (compact exports only; None otherwise)."""
    view = managed(y.__dlpack__())
    t = view.dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    if t.strides:
        strides, acc = [t.strides[i] for i in range(t.ndim)], 1
        for i in reversed(range(t.ndim)):
            if shape[i] > 1 and strides[i] != acc:
                return None
            acc *= shape[i]
    n = math.prod(shape)
    return ctypes.string_at(t.data + t.byte_offset, n * t.bits // 8)


def offset_tensor(values, dtype=None):
    """A tensor over `values` whose data points 64 bytes before them (poison bytes 0xa5 there)."""
    raw = np.frombuffer(values.tobytes(), dtype=np.uint8)
    buf = np.full(64 + raw.size, 0xA5, dtype=np.uint8)
    buf[64:] = raw
    view = buf[64:].view(values.dtype).reshape(values.shape)
    p = Producer(view, byte_offset=64, dtype=dtype)
    p.array = buf  # keep the whole buffer alive
    return p


def byte_offset():
    lines, imported, misread = [], 0, 0
    cases = [("float32 3x4", np.arange(12, dtype=np.float32).reshape(3, 4) - 6.75, None),
             ("float32 1024x1024", np.arange(1 << 20, dtype=np.float32).reshape(1024, 1024), None),
             ("bool 24", np.arange(24) % 3 == 0, None),
             ("float64 24", np.arange(24, dtype=np.float64) - 6.75, None),
             ("int16 1024", np.arange(1024, dtype=np.int16) - 47, None),
             ("bfloat16 2048", (np.arange(2048, dtype=np.uint16) | 0x4000), (4, 16))]
    for label, values, dtype in cases:
        try:
            y = from_dlpack(offset_tensor(values, dtype))
        except Exception as e:  # noqa: BLE001 - a dtype it refuses says nothing about byte_offset
            lines.append(f"{label}: refused ({type(e).__name__}: {str(e).strip()[:120]})")
            continue
        got = read_back(y)
        del y  # released now, while the interpreter is whole (its deleter calls back into Python)
        imported += 1
        if got == values.tobytes():
            lines.append(f"{label}: read back right")
        else:
            misread += 1
            head = got[:8].hex(" ") if got is not None else "a non-compact export"
            lines.append(f"{label}: read back wrong (first bytes {head}, expected {values.tobytes()[:8].hex(' ')})")
    return lines, imported > 0 and misread == imported, "from_dlpack misreads tensors with byte_offset 64"


def scalar():
    lines, bad = [], 0
    for label, null_shape in (("0-d float32", False), ("0-d float32, NULL shape and strides", True)):
        p = Producer(np.array(2.5, dtype=np.float32))
        if null_shape:
            p._m.dl_tensor.shape = None
            p._m.dl_tensor.strides = None
        try:
            y = from_dlpack(p)
        except Exception as e:  # noqa: BLE001 - the refusal is the finding
            lines.append(f"{label}: refused ({type(e).__name__}: {e})")
            bad += 1
            continue
        ok = read_back(y) == np.float32(2.5).tobytes()
        del y
        bad += not ok
        lines.append(f"{label}: imported, read back {'right' if ok else 'wrong'}")
    return lines, bad == 2, "from_dlpack refuses (or misreads) 0-d tensors"


which = sys.argv[2] if len(sys.argv) > 2 else ""
if which not in ("byte_offset", "scalar"):
    raise SystemExit(__doc__.rsplit("Usage: ", 1)[1])
lines, shown, what = byte_offset() if which == "byte_offset" else scalar()
gc.collect()
mod = sys.modules.get(name)
version = getattr(mod, "__version__", "")
for line in lines:
    print("  " + line)
verdict(shown, f"{name} {version}: {what} (read back through its own export)")
