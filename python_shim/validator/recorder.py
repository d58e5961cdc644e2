"""The stand-in a pair case hands a consumer in place of a producer's array.

``Recorded(x)`` answers ``__dlpack__`` and ``__dlpack_device__`` by asking ``x``, and keeps a
record of each call: its keywords, what it raised, or, for a capsule, its name and the device
and flags of the tensor inside (read when the capsule is handed over, before the consumer owns
it). The pair cases read the record to tell whose behaviour an outcome is: a consumer's result
depends on what the producer served it.
"""
import ctypes

_name_of = ctypes.pythonapi.PyCapsule_GetName
_name_of.restype = ctypes.c_char_p
_name_of.argtypes = [ctypes.py_object]
_pointer_of = ctypes.pythonapi.PyCapsule_GetPointer
_pointer_of.restype = ctypes.c_void_p
_pointer_of.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_capsule = ctypes.pythonapi.PyCapsule_IsValid
_is_capsule.restype = ctypes.c_int
_is_capsule.argtypes = [ctypes.py_object, ctypes.c_char_p]

# dlpack.h: DLManagedTensorVersioned is {DLPackVersion (two uint32), manager_ctx, deleter,
# uint64 flags, DLTensor}; DLManagedTensor begins with its DLTensor. A DLTensor is {data,
# DLDevice {int32 device_type, int32 device_id}, ...}.
_VERSIONED_TENSOR = 8 + 8 + 8 + 8
_VERSIONED_FLAGS = 8 + 8 + 8


def _host_elements(t):
    """The elements of a host DLTensor at address t, in C order, as bytes (None when its fields
    are not those of a plain tensor: rank over 8, a sub-byte or multi-lane dtype)."""
    ndim = ctypes.c_int32.from_address(t + 16).value
    bits = ctypes.c_uint8.from_address(t + 21).value
    lanes = ctypes.c_uint16.from_address(t + 22).value
    if not 0 <= ndim <= 8 or bits % 8 or lanes != 1:
        return None
    size = bits // 8
    data = ctypes.c_void_p.from_address(t).value
    shape_p = ctypes.c_void_p.from_address(t + 24).value
    strides_p = ctypes.c_void_p.from_address(t + 32).value
    offset = ctypes.c_uint64.from_address(t + 40).value
    shape = [ctypes.c_int64.from_address(shape_p + 8 * i).value for i in range(ndim)] if ndim else []
    if any(n < 0 for n in shape):
        return None
    if strides_p:
        strides = [ctypes.c_int64.from_address(strides_p + 8 * i).value for i in range(ndim)]
    else:
        strides, acc = [0] * ndim, 1
        for i in reversed(range(ndim)):
            strides[i], acc = acc, acc * shape[i]
    count = 1
    for n in shape:
        count *= n
    if count == 0:
        return b""
    if not data:
        return None
    base, out, index = data + offset, bytearray(), [0] * ndim
    for _ in range(count):
        at = base + size * sum(i * s for i, s in zip(index, strides))
        out += ctypes.string_at(at, size)
        for d in reversed(range(ndim)):
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
    return bytes(out)


def capsule_facts(cap):
    """(name, (device_type, device_id), flags or None, elements or None) of an unconsumed
    DLPack capsule, the elements (bytes, C order) only for a tensor on (kDLCPU, 0); None for
    anything else."""
    if type(cap).__name__ != "PyCapsule":
        return None
    name = _name_of(cap)
    if name not in (b"dltensor", b"dltensor_versioned") or not _is_capsule(cap, name):
        return None
    p = _pointer_of(cap, name)
    if not p:
        return None
    versioned = name == b"dltensor_versioned"
    t = p + (_VERSIONED_TENSOR if versioned else 0)
    device = (ctypes.c_int32.from_address(t + 8).value, ctypes.c_int32.from_address(t + 12).value)
    flags = ctypes.c_uint64.from_address(p + _VERSIONED_FLAGS).value if versioned else None
    elements = _host_elements(t) if device == (1, 0) else None
    return name.decode(), device, flags, elements


# A capsule whose tensor names device type 0, 5, 6, a negative one or one past 255 holds no tensor
# (a struct of another kind under the name, garbage: a DLPack after 1.3 may define types past
# 18, but not hundreds) and is not handed on: a consumer reading it would follow garbage pointers.
_DEVICE_TYPES = set(range(1, 256)) - {5, 6}
_withheld = []  # such capsules, kept alive: their destructor would read the same garbage


class Recorded:
    """A producer's array as a consumer sees it through the protocol, every call recorded in
    ``calls``: (method, keywords, outcome), where outcome is ``("raised", "Type: text")``,
    ``("capsule", name, device, flags, elements)``, or ``("withheld", name, device, flags, None)``
    for a capsule whose device type DLPack does not define (raised to the consumer as BufferError), ``("returned", repr)``."""

    def __init__(self, inner):
        self._inner = inner
        self.calls = []

    def __dlpack_device__(self):
        try:
            d = self._inner.__dlpack_device__()
        except BaseException as e:
            self.calls.append(("__dlpack_device__", {}, ("raised", f"{type(e).__name__}: {e}")))
            raise
        self.calls.append(("__dlpack_device__", {}, ("returned", repr(tuple(int(v) for v in d)))))
        return d

    def __dlpack__(self, *args, **kwargs):
        kw = dict(kwargs)
        if args:
            kw["positional"] = args
        try:
            cap = self._inner.__dlpack__(*args, **kwargs)
        except BaseException as e:
            self.calls.append(("__dlpack__", kw, ("raised", f"{type(e).__name__}: {e}")))
            raise
        facts = capsule_facts(cap)
        if facts and facts[1][0] not in _DEVICE_TYPES:
            _withheld.append(cap)
            self.calls.append(("__dlpack__", kw, ("withheld",) + facts[:3] + (None,)))
            raise BufferError(f"validator.recorder: the producer's capsule names device type {facts[1][0]}, "
                              "which DLPack does not define: not handed on")
        self.calls.append(("__dlpack__", kw, ("capsule",) + facts if facts else ("returned", repr(cap)[:80])))
        return cap
