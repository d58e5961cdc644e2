"""DEL-07 (a SHOULD): a deleter called after the interpreter is finalised (from a C++ static
destructor, as a C++ consumer's global would) must not crash. The capsule is consumed (renamed
used_...), and libc's __cxa_atexit is asked to call its deleter on the managed struct at exit,
which runs after Py_Finalize. A control run exits without the registration: the crash is the
deleter's, not the library's own teardown.
Cases: python.deleter.after_finalize.   Usage: python3 deleter_after_finalize.py LIB [legacy]"""
import subprocess
import sys

from _dl import confirmed

name = sys.argv[1]
versioned = not (len(sys.argv) > 2 and sys.argv[2] == "legacy")
code = f"""
import sys; sys.path.insert(0, {repr(sys.path[0])})
import ctypes, numpy as np
from _dl import managed, _api
from _libs import lib
make, _ = lib({name!r})
x = make(np.arange(12, dtype=np.float32).reshape(3, 4))
cap = x.__dlpack__({'max_version=(1, 3)' if versioned else ''})
m = managed(cap)
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName(cap, {(b'used_dltensor_versioned' if versioned else b'used_dltensor')!r})
if sys.argv[1] == "register":
    libc = ctypes.CDLL("libc.so.6")
    libc.__cxa_atexit.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    libc.__cxa_atexit(ctypes.cast(m.deleter, ctypes.c_void_p), ctypes.addressof(m), None)
del x
print("ready", flush=True)
"""
runs = {mode: subprocess.run([sys.executable, "-c", code, mode], capture_output=True, text=True, timeout=120)
        for mode in ("control", "register")}
assert runs["control"].returncode == 0, f"the control run exits {runs['control'].returncode}: {runs['control'].stderr[-300:]}"
bad = runs["register"]
assert bad.returncode != 0, "the deleter ran after finalisation without harm"
confirmed(f"{name}: its deleter called after Py_Finalize ends the process with status {bad.returncode} "
          f"({bad.stderr.strip()[-80:]}); the control run exits 0")
