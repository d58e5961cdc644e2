"""ctypes views of the DLPack structs, a hand-made producer and the verdict helpers shared by
every confirmation script in this folder.

Each script shows one behaviour of a real library in a few lines of that library's public API,
outside dlpack-validate: the validator's finding (a baseline entry's `confirmed_by`, or a line of
atlas/findings.tsv) stands only while its script confirms it. One convention for all of them:

- the docstring says the behaviour, the requirement it breaks with its strength and the spec's
  words, and `Usage:` (LIB where the script takes a library name, as the baselines' do);
- exit 0, with a line starting "confirmed:", when the behaviour shows; exit 1 when it does not
  (verdict(False, ...), or a failed assert); exit 2, "not applicable:", when this library or
  release lacks what the script needs (a keyword, an API), which is neither;
- crashes are provoked in a child interpreter (dies_with_signal), never suffered.

tests/peers/CMakeLists.txt runs the baselines' scripts against the pinned peers; the atlas's
scripts run with the interpreter of the release in question (docs/atlas.md). Layouts are the
DLPack header's (docs/requirements.md)."""
import ctypes
import os
import subprocess
import sys

import numpy as np


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2

_api = ctypes.pythonapi
# PyCapsule_New through a prototype of our own: ctypes.pythonapi's function objects are shared by
# every module in the process, and some libraries set their argtypes (Warp: a destructor type that
# refuses None), which would break this helper once such a library is imported or exports.
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api))
_api.PyCapsule_GetName.restype = ctypes.c_char_p
_api.PyCapsule_GetName.argtypes = [ctypes.py_object]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
HERE = os.path.dirname(os.path.abspath(__file__))


def capsule_name(cap):
    return _api.PyCapsule_GetName(cap).decode()


def managed(cap):
    """The struct behind a DLPack capsule (by its name); it keeps the capsule alive, so the
    struct stays valid as long as the returned view is used."""
    name = capsule_name(cap)
    p = _api.PyCapsule_GetPointer(cap, name.encode())
    view = (DLManagedTensorVersioned if name.endswith("versioned") else DLManagedTensor).from_address(p)
    view.capsule = cap
    return view


class Producer:
    """An object with __dlpack__/__dlpack_device__ handing out one capsule over `array` (a
    NumPy array kept alive here), as a minimal DLPack producer would. `deleter_calls` counts the
    deleter; the capsule has no destructor (nothing to free: the NumPy array owns the memory)."""

    def __init__(self, array, versioned=False, version=(1, 3), device=(1, 0), dtype=None,
                 byte_offset=0, strides=None, null_deleter=False, flags=0, lanes=1):
        self.array = np.asarray(array)
        self.deleter_calls = 0
        self.kwargs_seen = []
        self._shape = (ctypes.c_int64 * max(1, self.array.ndim))(*self.array.shape)
        st = strides if strides is not None else [s // self.array.itemsize for s in self.array.strides]
        self._strides = (ctypes.c_int64 * max(1, self.array.ndim))(*st)
        code, bits = dtype or _code_of(self.array.dtype)
        t = DLTensor(self.array.ctypes.data - byte_offset, device[0], device[1], self.array.ndim, code, bits, lanes,
                     self._shape, self._strides, byte_offset)
        self._deleter = DELETER(self._count)
        deleter = DELETER() if null_deleter else self._deleter
        if versioned:
            self._m = DLManagedTensorVersioned(version[0], version[1], None, deleter, flags, t)
        else:
            self._m = DLManagedTensor(t, None, deleter)
        self.device = device
        self.capsule = _capsule_new(ctypes.addressof(self._m),
                                    b"dltensor_versioned" if versioned else b"dltensor", None)

    def _count(self, _):
        self.deleter_calls += 1

    def __dlpack__(self, **kwargs):
        self.kwargs_seen.append(kwargs)
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def _code_of(dt):
    return {"f": 2, "i": 0, "u": 1, "b": 6, "c": 5}[dt.kind], dt.itemsize * 8


def child(code):
    """Run `code` (Python source) in a fresh interpreter of this one that can import this folder's
    helpers; the finished process (returncode negative: killed by that signal)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (HERE, env.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)


def dies_with_signal(code):
    """Run `code` in a child (child()); the signal that killed it, or 0."""
    r = child(code)
    return -r.returncode if r.returncode < 0 else 0


def confirmed(text):
    print("confirmed:", text)


def verdict(shows, text):
    """End the script: exit 0 ("confirmed: TEXT") when the behaviour shows, else exit 1."""
    print(("confirmed: " if shows else "not shown: ") + text)
    sys.exit(0 if shows else 1)


def not_applicable(text):
    """End the script with exit 2: this library or release lacks what the script needs."""
    print("not applicable: " + text)
    sys.exit(2)


_NAMES = {}  # PyCapsule_SetName keeps the pointer, not a copy: the names must outlive the capsules


def rename(cap, name):
    """Rename a capsule, as a consumer does once it owns the tensor ('used_dltensor')."""
    _api.PyCapsule_SetName(cap, _NAMES.setdefault(name, name.encode()))


class _MallInfo2(ctypes.Structure):
    _fields_ = [(f, ctypes.c_size_t) for f in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                               "fsmblks", "uordblks", "fordblks", "keepcost")]


_libc = ctypes.CDLL("libc.so.6")
_libc.mallinfo2.restype = _MallInfo2


def heap_in_use():
    """The C heap's bytes in use as the validator reads them (glibc's mallinfo2: in-use bytes of
    the arenas plus mmapped ones): what the DEL-01 scripts measure growth by."""
    m = _libc.mallinfo2()
    return m.uordblks + m.hblkhd
