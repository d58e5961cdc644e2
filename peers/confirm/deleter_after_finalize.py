"""DEL-07 (a SHOULD): a deleter called after the interpreter is finalised (from a C++ static
destructor, as a C++ consumer's global would) must not crash. The capsule is consumed (renamed
used_...), and libc's __cxa_atexit is asked to call its deleter on the managed struct at exit,
which runs after Py_Finalize. A control run exits without the registration: the harm is the
deleter's, not the library's own teardown. Harm is a crash, or a process that never exits once it
has said "ready" (a deleter whose code is gone by then may run anything, a loop included: CI saw
Warp's hang, this machine its SIGSEGV and SIGILL); the case python.deleter.after_finalize judges
both as DEL-07. The import before "ready" has no deadline here (that is loading, not the deleter).
Cases: python.deleter.after_finalize.   Usage: python3 deleter_after_finalize.py LIB [legacy]"""
import subprocess
import sys
import tempfile

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


AFTER_READY_S = 120  # the most finalisation may take once the child said "ready"


def run(mode, after_ready_s=AFTER_READY_S):
    """(returncode, or None when it never exited; stderr's tail; whether it said "ready")."""
    # stderr to a file: an import that writes much cannot block on a full pipe while this waits
    # for the first line of stdout.
    with tempfile.TemporaryFile() as err, subprocess.Popen(
            [sys.executable, "-c", code, mode], stdout=subprocess.PIPE, stderr=err, text=True) as p:
        ready = p.stdout.readline().strip() == "ready"
        try:
            p.communicate(timeout=after_ready_s if ready else None)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        err.seek(0)
        tail = err.read().decode(errors="replace").strip()[-80:]
        return (None if p.returncode == -9 and ready else p.returncode), tail, ready


control, control_err, control_ready = run("control")
assert control == 0 and control_ready, f"the control run exits {control}: {control_err}"
rc, err, ready = run("register")
assert ready, f"the registering run failed before finalisation (status {rc}): {err}"
assert rc != 0, "the deleter ran after finalisation without harm"
harm = f"never exits (killed {AFTER_READY_S} s after it said ready)" if rc is None else f"ends with status {rc}"
confirmed(f"{name}: with its deleter called after Py_Finalize the process {harm} ({err}); "
          f"the control run exits 0")
