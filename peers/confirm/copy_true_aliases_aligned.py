"""KW-07 (a MUST, array API from_dlpack): with copy=True the function "must always copy", and
with copy=False it aliases or raises (BufferError per the copy text; ValueError, the older
wording, is a WARN). What a consumer does can depend on the alignment of the source's data:
JAX 0.10.2 imports 64-byte aligned data in place even under copy=True, copies other data, and
refuses copy=False for it with ValueError.
The source is a NumPy float32 array placed MISALIGN bytes past a 256-byte boundary (0, 64, 16
or 4). After the import the source is written; a result that changes with it views the
producer's memory. The producer honours a forwarded copy=True by handing out a capsule of a
copy, as the validator's case does: a consumer that forwards the request is not charged.
Cases: python.consumer.kw.copy.a256, .a64 (copy=True aliases), .a16, .a4 (copy=False refused
with ValueError; on JAX 0.4.38 and 0.5.3 copy=False silently copies that data instead: "copies").
Usage: python3 copy_true_aliases_aligned.py LIB MISALIGN aliases|copies|ValueError"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib



class CopyingProducer:
    """A Producer over `x` that hands out a capsule of a copy when asked copy=True."""

    def __init__(self, x):
        self.src, self.copy = Producer(x), Producer(x.copy())
        self.kwargs_seen = []

    def __dlpack__(self, **kw):
        self.kwargs_seen.append(kw)
        return (self.copy if kw.get("copy") is True else self.src).capsule

    def __dlpack_device__(self):
        return (1, 0)


name, misalign, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3]
_, from_dlpack = lib(name)
n = 12
raw = np.zeros(n * 4 + 512, dtype=np.uint8)
start = (-raw.ctypes.data) % 256 + misalign
x = raw[start:start + n * 4].view(np.float32)
x[:] = np.arange(n)
if expected == "aliases":
    p = CopyingProducer(x)
    y = from_dlpack(p, copy=True)
    x[0] = 99
    seen = float(np.asarray(y)[0])
    del y  # while the producer (and its deleter) is alive
    assert seen == 99, f"copy=True gave a copy (result[0] = {seen} after the source's was set to 99)"
    confirmed(f"{name}: from_dlpack(copy=True) of data at {x.ctypes.data:#x} (256-byte boundary + {misalign}) "
              f"views the source: result[0] is 99 after the source was written (__dlpack__ asked {p.kwargs_seen})")
elif expected == "copies":
    # copy=False may alias or refuse; a silent copy breaks it (JAX 0.4.38 and 0.5.3 copy data
    # 4 or 16 bytes past a 64-byte boundary instead of refusing it, as later releases do)
    p = CopyingProducer(x)
    y = from_dlpack(p, copy=False)
    x[0] = 99
    seen = float(np.asarray(y)[0])
    del y
    assert seen != 99, "copy=False aliased the source (result[0] followed the write)"
    confirmed(f"{name}: from_dlpack(copy=False) of data at {x.ctypes.data:#x} (256-byte boundary + {misalign}) "
              f"is a copy: result[0] is {seen} after the source was set to 99 (__dlpack__ asked {p.kwargs_seen})")
else:
    try:
        p = CopyingProducer(x)
        from_dlpack(p, copy=False)
    except Exception as e:  # noqa: BLE001 - the type is the finding
        assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
        confirmed(f"{name}: from_dlpack(copy=False) of data 256-byte boundary + {misalign} -> "
                  f"{type(e).__name__}: {str(e)[:100]}")
    else:
        raise AssertionError("copy=False was not refused")
