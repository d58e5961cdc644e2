"""dpnp: making small arrays keeps C-heap memory by itself (about 170 bytes an array for a bool
(2, 3, 4) view at an offset, whose fill is a SYCL kernel), while exporting each one and running
its deleter adds nothing measurable. Not a finding: it is why python.input.producer's leak loop
(DEL-01, MUST: the deleter frees all that manager_ctx holds) takes off what making the arrays
alone grows the heap by; without that, this growth was read as a leak of dpnp's deleter.

Shown: over 2,000 and 4,000 cycles, making the arrays alone grows the heap by 64 KiB or more, and
making, exporting and releasing them grows it by no more than that plus 64 KiB.

Usage: python dpnp_make_keeps_memory.py   (the oneAPI venv's python-oneapi)"""
import ctypes
import gc

import numpy as np

from _dl import heap_in_use as heap, managed, rename, verdict, not_applicable

try:
    import dpctl
    import dpnp
except ImportError as e:
    not_applicable(f"dpnp is not importable here: {e}")


q = dpctl.SyclQueue()
host = np.ones(24, dtype=bool)


def make():
    buf = dpnp.empty((25,), dtype=bool, sycl_queue=q)
    buf[1:] = dpnp.asarray(host, sycl_queue=q)
    a = buf[1:].reshape((2, 3, 4))
    q.wait()
    return a


def export_release(a):
    m = managed(a.__dlpack__(max_version=(1, 3)))
    rename(m.capsule, "used_dltensor_versioned")
    m.deleter(ctypes.addressof(m))


def growth(n, exported):
    for _ in range(100):  # warm-up: what the first arrays keep for good
        a = make()
        if exported:
            export_release(a)
    gc.collect()
    q.wait()
    before = heap()
    for _ in range(n):
        a = make()
        if exported:
            export_release(a)
    del a
    gc.collect()
    q.wait()
    return heap() - before


rows = [(n, growth(n, False), growth(n, True)) for n in (2000, 4000)]
text = "; ".join(f"{n} cycles: making alone +{m} bytes, making/exporting/releasing +{e} bytes" for n, m, e in rows)
verdict(all(m >= 64 * 1024 and e <= m + 64 * 1024 for _, m, e in rows), text)
