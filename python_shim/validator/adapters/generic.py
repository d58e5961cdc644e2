"""Generic mode: a package without an adapter, driven through its own ``from_dlpack``.

Used by ``resolve()`` for a module that has no built-in adapter and is not an Array API
namespace, and for any module named as ``generic:PKG`` (docs/adapters.md, "No adapter: the
generic mode"). It needs only a consumer entry point: ``PKG.from_dlpack``, else a
``from_dlpack`` class or static method of a class the module exposes (``onnxruntime.OrtValue``).

- Arrays: ``make`` builds the reference pattern in a source the validator controls (a NumPy
  array from ``_numpy_layouts`` for the standard dtypes when NumPy is importable, else this
  module's ``Source``: a malloc'd DLPack tensor behind a capsule) and returns the package's
  import of it, ``from_dlpack(source)``. A source the package refuses (a dtype, a layout) is a
  NotImplementedError quoting the package's message: a skip, not a failure. A layout other than
  ``contiguous`` counts only where the array's own export shows the source's strides.
- Read-back: ``to_bytes`` is the validator's own inspector (``inspect_export``): it calls the
  array's ``__dlpack__`` (legacy first, then ``max_version=(1, 3)``), reads the DLTensor the
  capsule holds with the harness's tensor reader (``_dlpack_validate.read_capsule`` and
  ``capsule_elements``: the one reader the cases use too), which copies the elements out by
  shape, strides and byte_offset into row-major bytes, and consumes the capsule as a consumer
  must (``consume_capsule``: renamed ``used_...``, deleter called once).
- dtypes: those ``from_dlpack`` accepts, probed once per dtype; devices: the CPU only;
  ``is_writable``: None (nothing tells); name: the module's name; version: its ``__version__``,
  else its distribution's version.
- ``notes``: what the report says about this mode, including what an adapter would add.
"""
import ctypes
import inspect
import itertools
import math

from .._dlpack_validate import capsule_elements, consume_capsule, pattern_bytes, read_capsule

# ---- DLPack structs (DLPack 1.x, the layouts of include/dlpack_validate/plugin.h) ----------


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


READ_ONLY, IS_COPIED = 1, 2
KDLCPU = 1
_OWN_VERSION = (1, 3)


def _py(name, restype, *argtypes):
    """A C-API function through a prototype of our own: ctypes.pythonapi's function objects are
    shared by the whole process, and a library may set their argtypes (Warp does). PYFUNCTYPE
    keeps the GIL held and raises a Python error the call set."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_new = _py("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
# In a capsule destructor the capsule is dying: only its address is passed around.
_dying_name = _py("PyCapsule_GetName", ctypes.c_void_p, ctypes.c_void_p)
_dying_pointer = _py("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

# Capsule names live as long as the process (PyCapsule_SetName keeps the pointer, not a copy).
_NAMES = {n: ctypes.create_string_buffer(n) for n in (b"dltensor", b"dltensor_versioned")}


def _addr(name):
    return ctypes.addressof(_NAMES[name])


def _describe(e):
    return f"{type(e).__name__}: {e}"


# ---- the inspector: reading an array through its own export ------------------------------

class Export:
    """One export of ``array`` (``array.__dlpack__()``, else with ``max_version=(1, 3)``), read by
    the validator's own tensor reader (the harness's inspector, in the compiled module: the
    struct read without trusting it, the elements gathered by shape, strides and byte_offset)
    until ``close()`` consumes the capsule: renamed ``used_dltensor[_versioned]`` and its
    deleter called once. A capsule that is not an unconsumed DLPack 1.x or legacy one whose
    struct reads as a tensor is left unconsumed (its destructor frees it)."""

    def __init__(self, array):
        if not hasattr(array, "__dlpack__"):
            raise NotImplementedError(f"{type(array).__qualname__} has no __dlpack__: the validator's inspector "
                                      "reads arrays through their own export")
        try:
            cap = array.__dlpack__()
        except Exception as first:  # noqa: BLE001 - a versioned-only producer refuses this
            try:
                cap = array.__dlpack__(max_version=_OWN_VERSION)
            except Exception as second:  # noqa: BLE001
                raise NotImplementedError(
                    f"the validator's inspector reads arrays through their own __dlpack__, which raised "
                    f"{_describe(first)} (and with max_version=(1, 3): {_describe(second)})") from None
        if type(cap).__name__ != "PyCapsule":
            raise NotImplementedError(f"__dlpack__() returned a {type(cap).__name__}, not a capsule")
        facts = read_capsule(cap)  # NotImplementedError: not a tensor of ours to read or consume
        self.capsule = cap
        self.versioned, self.version, self.flags = facts["versioned"], facts["version"], facts["flags"]
        self._facts = facts

    def close(self):
        cap, self.capsule = self.capsule, None
        if cap is not None:
            consume_capsule(cap)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- what the tensor says -------------------------------------------------------------
    def shape(self):
        return self._facts["shape"]

    def strides(self):
        """Strides in elements; compact row-major ones when the pointer is NULL (legacy)."""
        return self._facts["strides"]

    def dtype(self):
        return self._facts["dtype"]

    def to_bytes(self):
        """The elements, row-major compact (sub-byte types packed little bit-endian)."""
        return capsule_elements(self.capsule)


def inspect_export(array):
    """``array``'s elements read through its own export (row-major compact bytes)."""
    with Export(array) as e:
        return e.to_bytes()


def compact_strides(shape):
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return tuple(reversed(out))


# ---- a producer of its own: a malloc'd tensor behind a capsule ---------------------------


def _libc():
    import ctypes.util
    for name in (None, ctypes.util.find_library("c")):
        try:
            lib = ctypes.CDLL(name)
            lib.malloc  # noqa: B018 - present?
            return lib
        except (OSError, AttributeError):
            continue
    return None


_LIBC = _libc()
if _LIBC is not None:
    _malloc = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(("malloc", _LIBC))
    _FREE_ADDR = ctypes.cast(_LIBC.free, ctypes.c_void_p).value
    _free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_FREE_ADDR)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _source_destructor(capsule):
    """A Source capsule dies: free the tensor unless a consumer took it (renamed it)."""
    name = _dying_name(capsule)
    if name and ctypes.string_at(name) in (b"dltensor", b"dltensor_versioned"):
        ptr = _dying_pointer(capsule, name)
        if ptr:
            _free(ptr)


LAYOUTS = ("contiguous", "fortran", "strided", "offset", "reversed", "broadcast")


def layout_plan(shape, layout):
    """(strides, buffer elements, element-0 index) of a layout (docs/plugin.md#layouts)."""
    n = math.prod(shape)
    if layout == "contiguous":
        return compact_strides(shape), n, 0
    if not shape:
        raise NotImplementedError(f"layout {layout} needs ndim >= 1")
    if layout == "fortran":
        return tuple(reversed(compact_strides(tuple(reversed(shape))))), n, 0
    if layout == "strided":
        big = shape[:-1] + (2 * shape[-1],)
        return compact_strides(big)[:-1] + (2,), math.prod(big), 0
    if layout == "offset":
        return compact_strides(shape), n + 1, 1
    if layout == "reversed":
        st = compact_strides(shape)
        return (-st[0],) + st[1:], n, (shape[0] - 1) * st[0] if n else 0
    if layout == "broadcast":
        return (0,) + compact_strides(shape[1:]), math.prod(shape[1:]), 0
    raise NotImplementedError(f"unknown layout {layout!r}")


class Source:
    """A CPU array of the reference pattern exported by the validator itself (no NumPy needed):
    each ``__dlpack__`` call hands out one malloc'd block holding the managed tensor, its shape,
    strides and data, with libc's ``free`` as the deleter (callable from any thread, with or
    without the GIL, even after the interpreter is gone). The first export lends the data (it is
    the source's only copy); later ones and ``copy=True`` are flagged IS_COPIED."""

    def __init__(self, shape, dtype_key, layout="contiguous", values="plain"):
        if _LIBC is None:
            raise NotImplementedError("no C library to allocate a DLPack tensor with (ctypes found no malloc)")
        key = tuple(dtype_key)
        self.shape, self.key, self.layout = tuple(int(s) for s in shape), key, layout
        n = math.prod(self.shape)
        if key[1] % 8:
            if layout != "contiguous":
                raise NotImplementedError(f"a {key[1]}-bit type is packed: only the contiguous layout")
            self.strides, self._elements, self._start = compact_strides(self.shape), None, 0
            self._data = pattern_bytes(key, n, values)
            return
        isz = key[1] // 8
        self.strides, self._elements, self._start = layout_plan(self.shape, layout)
        if layout == "broadcast":
            m = math.prod(self.shape[1:])
            logical = pattern_bytes(key, m, values) * self.shape[0]
        else:
            logical = pattern_bytes(key, n, values)
        buf = bytearray(self._elements * isz)
        for i, idx in enumerate(itertools.product(*(range(s) for s in self.shape))):
            at = (self._start + sum(a * b for a, b in zip(idx, self.strides))) * isz
            buf[at:at + isz] = logical[i * isz:(i + 1) * isz]
        self._data = bytes(buf)
        self._lent = False

    def __dlpack_device__(self):
        return (KDLCPU, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if stream is not None:
            raise ValueError(f"stream must be None for a CPU array, not {stream!r}")
        if dl_device is not None and tuple(dl_device) != (KDLCPU, 0):
            raise BufferError(f"the validator's source lives on the CPU, not on {tuple(dl_device)}")
        copied = bool(copy) or getattr(self, "_lent", False)
        if copy is False and copied:
            raise BufferError("copy=False: the source's data was lent to an earlier export")
        self._lent = True
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        return self._capsule(versioned, copied)

    def _capsule(self, versioned, copied):
        ndim, nbytes = len(self.shape), len(self._data)
        head = ctypes.sizeof(DLManagedTensorVersioned if versioned else DLManagedTensor)
        block = _malloc(head + 16 * ndim + 128 + nbytes)
        if not block:
            raise MemoryError("malloc failed")
        ctypes.memset(block, 0, head + 16 * ndim)
        shape_at, strides_at = block + head, block + head + 8 * ndim
        data_at = strides_at + 8 * ndim
        data_at += (16 - data_at) % 64  # 16 bytes past a 64-byte boundary, as _numpy_layouts places NumPy's
        for i, (s, st) in enumerate(zip(self.shape, self.strides)):
            ctypes.c_int64.from_address(shape_at + 8 * i).value = s
            ctypes.c_int64.from_address(strides_at + 8 * i).value = st
        ctypes.memmove(data_at, self._data, nbytes)
        if versioned:
            m = DLManagedTensorVersioned.from_address(block)
            m.major, m.minor = _OWN_VERSION
            m.flags = IS_COPIED if copied else 0
        else:
            m = DLManagedTensor.from_address(block)
        m.deleter = _FREE_ADDR
        t = m.dl_tensor
        t.data = data_at + self._start * (self.key[1] // 8) if math.prod(self.shape) else None
        t.device_type, t.device_id, t.ndim = KDLCPU, 0, ndim
        t.code, t.bits, t.lanes = self.key[0], self.key[1], 1
        t.shape, t.strides, t.byte_offset = shape_at, strides_at, 0
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return _capsule_new(block, _addr(name), ctypes.cast(_source_destructor, ctypes.c_void_p).value)


# ---- finding the consumer ---------------------------------------------------------------

def consumer_of(mod):
    """(callable, "where") of the package's from_dlpack, or (None, what was looked at)."""
    fn = getattr(mod, "from_dlpack", None)
    if callable(fn):
        return fn, f"{mod.__name__}.from_dlpack"
    for name in sorted(n for n in dir(mod) if not n.startswith("_")):
        try:
            cls = getattr(mod, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load
            continue
        if not isinstance(cls, type):
            continue
        try:
            raw = inspect.getattr_static(cls, "from_dlpack")
        except AttributeError:
            continue
        if isinstance(raw, (classmethod, staticmethod)) or type(raw).__name__ == "classmethod_descriptor":
            return getattr(cls, "from_dlpack"), f"{mod.__name__}.{name}.from_dlpack"
    return None, (f"{mod.__name__}.from_dlpack, or a from_dlpack class or static method of a class "
                  f"{mod.__name__} exposes")


def distribution_version(mod):
    v = getattr(mod, "__version__", None)
    if v:
        return str(v)
    try:
        from importlib import metadata
        top = mod.__name__.split(".")[0]
        for dist in metadata.packages_distributions().get(top, []) + [top]:
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
    except Exception:  # noqa: BLE001 - best effort
        pass
    return "unknown"


# Every (code, bits) the validator may ask for (docs/adapters.md, make's dtype_key), named.
_KEYS = {
    (6, 8): "bool", (0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
    (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
    (2, 16): "float16", (2, 32): "float32", (2, 64): "float64", (5, 64): "complex64", (5, 128): "complex128",
    (4, 16): "bfloat16", (7, 8): "float8_e3m4", (8, 8): "float8_e4m3", (9, 8): "float8_e4m3b11fnuz",
    (10, 8): "float8_e4m3fn", (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2", (13, 8): "float8_e5m2fnuz",
    (14, 8): "float8_e8m0fnu", (15, 6): "float6_e2m3fn", (16, 6): "float6_e3m2fn", (17, 4): "float4_e2m1fn",
}
_F32 = (2, 32)


def _dtype_text(key):
    return _KEYS.get(tuple(key), f"(code, bits) {tuple(key)}")


class Adapter:
    """The generic adapter for module ``mod`` (see the module docstring)."""

    def __init__(self, mod, forced_over=None):
        fn, where = consumer_of(mod)
        if fn is None:
            raise ValueError(f"{mod.__name__} has no from_dlpack (looked for {where})")
        self.module = mod
        self.module_name = mod.__name__
        self.name = mod.__name__
        self.version = distribution_version(mod)
        self._consumer, self.where = fn, where
        self._capsules_only = False
        self._refused = {}
        self._np_exports = {}
        try:
            import numpy  # noqa: F401
            from . import _numpy_layouts
            self._np = _numpy_layouts
        except ImportError:
            self._np = None
        self._init_called = self._first_contact()
        self.notes = self._notes(forced_over)
        # Said beside every consumer case whose read-back differs (Subject::read_back_route).
        self.read_back = (f"read back through {self.module_name}'s own __dlpack__ (generic mode): an export that "
                          "misdescribes the array (strides, shape, dtype, byte_offset) shows here too, so the fault "
                          "may be the producer's; the producer cases of the same dtype and layout tell which")

    # -- first contact: does from_dlpack take an object with __dlpack__, or a capsule? ----
    def _first_contact(self):
        def attempt(capsule):
            src = self._source((2, 3), _F32, "contiguous")
            self._consumer(src.__dlpack__() if capsule else src)

        try:
            attempt(False)
            return ""
        except Exception as first:  # noqa: BLE001
            failed = first
        init = getattr(self.module, "init", None)
        if callable(init) and _no_required_arguments(init):
            # Warp: "DLPack device conversion requires an initialized Warp runtime ... Call wp.init()"
            init()
            try:
                attempt(False)
                return f"{self.module_name}.init() was called first ({self.where} raised {_describe(failed)} before it)"
            except Exception:  # noqa: BLE001
                pass
        try:
            attempt(True)
        except Exception:  # noqa: BLE001 - refuses both: each make says why (a skip)
            return ""
        self._capsules_only = True
        self.consumer_protocol = False
        self.consumer_protocol_note = (
            f"{self.where} refuses an object with __dlpack__ ({_describe(failed)}) and takes its capsule: generic "
            "mode calls __dlpack__() for it, so keywords, streams and call order are not the package's to judge")
        return ""

    def _notes(self, forced_over):
        how = (f"generic mode, forced by the spec generic:{self.module_name} ({self.module_name} has a built-in "
               f"adapter, {forced_over}, not used)" if forced_over else
               f"no built-in adapter: generic mode")
        src = ("NumPy arrays (the dtypes NumPy exports) and the validator's own ctypes producer (the others: "
               "bfloat16, float8/6/4)" if self._np else "the validator's own ctypes producer (NumPy is not importable)")
        notes = [
            f"{how}: arrays are made by {self.where} from {src} and read back by the validator's own inspector "
            f"(the array's own __dlpack__, its DLTensor read by the validator's tensor reader)",
            "an adapter (docs/adapters.md) would add: arrays the library allocates itself (here every array is "
            "its import of a validator-made one, often a view of it), so exports of its own memory and its own "
            "layouts; layouts its from_dlpack does not keep; read-only arrays (make(read_only=True)) and "
            "is_writable (here None: the READ_ONLY import and copy-mutation checks cannot judge); a read-back "
            "that does not go through the library's own export (here an export bug also shows in the consumer "
            "read-backs); unexportable arrays (ERR-01); devices other than the CPU, with current_stream() and "
            "stream objects; the library's CPU device object for from_dlpack(device=...) (here \"cpu\")",
        ]
        if self._init_called:
            notes.append(self._init_called)
        return notes

    # -- sources ---------------------------------------------------------------------------
    def _source(self, shape, key, layout, values="plain"):
        """A validator-made CPU array of the pattern: NumPy for the dtypes NumPy exports, else
        the ctypes Source; a zero-size one always the Source, whose data is NULL as LAYOUT-10
        asks (NumPy's is not, and a package that keeps the pointer would be judged on it)."""
        shape = tuple(int(s) for s in shape)
        if math.prod(shape) and self._numpy_exports(key):
            L = self._np
            return L.lay_out(L.logical(key, shape, values), layout, key, values)
        return Source(shape, key, layout, values)

    def _numpy_exports(self, key):
        """NumPy is importable, has ``key`` and exports it (NumPy before 1.25 refuses bool)."""
        if self._np is None or key not in self._np._BASE:
            return False
        if key not in self._np_exports:
            try:
                self._np.placed((1,), self._np.numpy_dtype(key)).__dlpack__()
                self._np_exports[key] = True
            except Exception:  # noqa: BLE001 - BufferError, TypeError: the ctypes Source makes it
                self._np_exports[key] = False
        return self._np_exports[key]

    @staticmethod
    def _source_strides(src):
        if isinstance(src, Source):
            return src.strides
        return tuple(s // src.itemsize for s in src.strides)

    def _import(self, src, **kwargs):
        if self._capsules_only:
            if kwargs:
                raise TypeError(f"{self.where} takes a capsule, no keywords ({', '.join(kwargs)})")
            return self._consumer(src.__dlpack__())
        return self._consumer(src, **kwargs)

    def _refusal(self, key):
        """'' when from_dlpack takes a (2,) array of ``key``, else why not (probed once)."""
        if key not in self._refused:
            try:
                self._import(self._source((2,), key, "contiguous"))
                self._refused[key] = ""
            except NotImplementedError as e:
                self._refused[key] = str(e)
            except Exception as e:  # noqa: BLE001 - the package's refusal, quoted
                self._refused[key] = f"{self.where} refuses a {_dtype_text(key)} array: {_describe(e)}"
        return self._refused[key]

    # -- the adapter protocol ----------------------------------------------------------------
    def dtypes(self):
        return {k: k for k in _KEYS if not self._refusal(k)}

    def devices(self):
        return [(KDLCPU, 0)]

    # to_bytes reads the array through its own export: no reading independent of it (the
    # producer cases' edge-value check, cases/python/input.cpp).
    reads_through_export = True

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        key, shape = tuple(dtype_key), tuple(int(s) for s in shape)
        if tuple(device) != (KDLCPU, 0):
            raise NotImplementedError(f"generic mode makes arrays on the CPU only, not {tuple(device)}")
        if read_only:
            raise NotImplementedError("generic mode cannot make read-only arrays (it has no way to ask the "
                                      "package for one: an adapter can)")
        why = self._refusal(key)
        if why:
            raise NotImplementedError(why)
        src = self._source(shape, key, layout, values)
        try:
            array = self._import(src)
        except Exception as e:  # noqa: BLE001 - the package's refusal, quoted
            raise NotImplementedError(f"{self.where} refuses a {layout} {_dtype_text(key)} array of shape "
                                      f"{shape}: {_describe(e)}") from None
        if values != "plain":
            self._check_values(array, shape, key, layout, values)
        if layout != "contiguous" and math.prod(shape) > 1:
            self._check_layout(array, shape, self._source_strides(src), layout)
        return array

    def _check_values(self, array, shape, key, layout, values):
        """The package's array is its import of the validator's source, and generic mode reads it
        only through its export: where that export does not show the source's values, an
        import that lost them and an export that misdescribes them look the same. Such an array
        is not handed to a producer case (python.input.consumer.*.edge judge the import)."""
        n = math.prod(shape)
        want = (pattern_bytes(key, math.prod(shape[1:]), values) * shape[0] if layout == "broadcast" and shape
                else pattern_bytes(key, n, values))
        try:
            got = inspect_export(array)
        except Exception:  # noqa: BLE001 - the case's own export judges this
            return
        if got != want:
            raise NotImplementedError(
                f"the package's {_dtype_text(key)} array imported from {values} values does not show them through "
                "its export: generic mode cannot tell a lossy import from a wrong export (python.input.consumer.*."
                f"{values} judge the import)")

    def _check_layout(self, array, shape, want, layout):
        """A copy would make the package's array compact: it must not be judged on strides it
        never had. The layout counts only where the array's export shows the source's strides. An
        export that fails here is the case's own export's to judge (as in _check_values)."""
        try:
            export = Export(array)
        except NotImplementedError:
            return
        with export as e:
            got_shape, got = e.shape(), e.strides()
        same = got_shape == shape and all(a == b for s, a, b in zip(shape, got, want) if s > 1)
        if not same:
            raise NotImplementedError(
                f"{self.where} did not keep the {layout} layout of its source (strides {list(want)} came back as "
                f"{list(got)}, shape {list(got_shape)}): a copy, or a layout the package lacks")

    def from_dlpack(self, obj, **kwargs):
        if self._capsules_only:
            if kwargs:
                raise TypeError(f"{self.where} takes a capsule, no keywords ({', '.join(kwargs)})")
            return self._consumer(obj.__dlpack__())
        return self._consumer(obj, **kwargs)

    def to_bytes(self, array):
        return inspect_export(array)

    def is_writable(self, array):
        return None


def _no_required_arguments(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())

