"""dpnp: a copy grows the C heap by itself, whoever asks for it. Making arrays and copying each
twice with dpnp's own copy (the array API's asarray(x, copy=True), no DLPack at all) grows the
heap about as much as making them and exporting each twice with copy=True and running the
exports' deleters. Not a finding: it is why python.input.producer's leak loop (DEL-01, MUST: the
deleter frees all that manager_ctx holds) takes off, for a copy=True export, what making the
arrays and copying them as often without DLPack grows the heap by. Against making alone, this
growth of dpnp 0.20.0's SYCL runtime (tens of bytes a copy) was read as a leak of its deleter
(python.input.producer.float32.fortran.small.other.again.copy failed in about half of quiet runs).

Shown, for float32 (2, 3, 4) Fortran-order arrays over three rounds of 8,000 cycles, after one
round left unmeasured while the runtime's pools grow (the heap
moves by a few hundred KiB from round to round, on a busy machine more, so each figure is the
median of the rounds): making and copying 8 times a cycle grows the heap by 256 KiB or more over
making alone (the runtime keeps memory for a copy: quiet, 600 to 750 KiB), and making and exporting
twice with copy=True grows it by less than 32 bytes a cycle more than making and copying twice (DEL-01's loop judges 64 KiB over this input's 2,000 cycles: 32 bytes a
cycle). A deleter that kept its copy would add about 2 KiB a cycle: 16 MiB a round.

Usage: python dpnp_copy_keeps_memory.py   (the oneAPI venv's python-oneapi)"""
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
host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def make():
    a = dpnp.asarray(host, order="F", sycl_queue=q)
    q.wait()
    return a


def make_only(a):
    pass


def own_copies(a, k=2):
    xp = a.__array_namespace__()
    kept = [xp.asarray(a, copy=True) for _ in range(k)]
    del kept
def own_copies_8(a):
    own_copies(a, 8)


def exported_copies(a):
    held = [managed(a.__dlpack__(max_version=(1, 3), copy=True)) for _ in range(2)]
    for m in reversed(held):
        rename(m.capsule, "used_dltensor_versioned")
        m.deleter(ctypes.addressof(m))


def growth(n, cycle):
    for _ in range(100):  # warm-up: what the first arrays keep for good
        cycle(make())
    gc.collect()
    q.wait()
    before = heap()
    for _ in range(n):
        cycle(make())
    gc.collect()
    q.wait()
    return heap() - before


n = 8000
# The runtime's pools grow over the first ten thousand or so arrays, by hundreds of KiB whatever
# the cycle does (making alone grew 100 to 700 KiB in a first round): one round unmeasured first,
# so the rounds compared are the plateau's.
for cycle in (make_only, own_copies, exported_copies):
    growth(n, cycle)
# Whether copies keep memory is read from eight copies a cycle (600 to 750 KiB over a round,
# quiet): beside other SYCL work making alone moved by up to 500 KiB a round, which two copies a
# cycle did not stand out from.
rounds = [(growth(n, make_only), growth(n, own_copies_8), growth(n, own_copies), growth(n, exported_copies))
          for _ in range(3)]
text = "; ".join(f"{n} cycles: making alone +{m} bytes, making and copying 8 times +{c8}, twice +{c}, making and "
                 f"exporting twice with copy=True +{e}" for m, c8, c, e in rounds)
kept = sorted(c8 - m for m, c8, _, _ in rounds)[1]
added = sorted(e - c for _, _, c, e in rounds)[1]
text += (f"; medians: copying 8 times keeps {kept} bytes more than making alone, exporting twice {added} more "
         f"than copying twice")
verdict(kept >= 256 * 1024 and added < 32 * n, text)
