"""onnxruntime: its from_dlpack dereferences what it is given as a 'dltensor' capsule without
checking: anything else (a plain object, a 'dltensor_versioned' capsule a producer hands out
unasked, a capsule already consumed and renamed) kills the process with SIGSEGV instead of
raising (CAP-09: a consumer checks the capsule's name; ERR-04 for the plain object).
The consumer is onnxruntime.OrtValue.from_dlpack from 1.26 (it passes anything without
__dlpack__ through), the native OrtValue.from_dlpack(capsule, is_bool_tensor) on 1.21-1.25.
Cases: subject.load (phase load_check.consumer_versioned), python.consumer.error.no_methods.
Usage: python3 onnxruntime_capsule_segfault.py object|versioned|used"""
import sys

import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

from _dl import dies_with_signal, not_applicable, verdict

what = sys.argv[1]
if not hasattr(C.OrtValue, "from_dlpack"):
    not_applicable(f"onnxruntime {ort.__version__} has no DLPack import")
public = hasattr(ort.OrtValue, "from_dlpack")
call = "ort.OrtValue.from_dlpack(arg)" if public else "C.OrtValue.from_dlpack(arg, False)"
make = {"object": "arg = object()",
        "versioned": "p = Producer(np.arange(4, dtype=np.float32), versioned=True); arg = p if public else p.capsule",
        "used": "arg = np.arange(4, dtype=np.float32).__dlpack__(); rename(arg, 'used_dltensor')"}[what]
code = f"""
import numpy as np, onnxruntime as ort
from onnxruntime.capi import _pybind_state as C
from _dl import Producer, rename
public = {public}
{make}
try:
    {call}
except Exception as e:
    print(type(e).__name__, str(e)[:100])
"""
sig = dies_with_signal(code)
verdict(sig == 11, f"onnxruntime {ort.__version__}: {call} with {what} "
                   + (f"is killed by signal {sig}" if sig else "does not crash"))
