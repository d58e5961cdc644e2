"""Reproducers (`python -m validator ... --repro DIR`): for every unexpected result on a Python
subject, a standalone script that shows the behaviour with only the library (the two libraries,
for a pair case) and the standard library imported, and states the requirement and its text.
Ready to attach to an upstream issue.

Written for the families whose behaviour a few lines of the library's public API show:
  - consumer cases (the library's from_dlpack given a tensor of a dtype and layout, or with a
    version stamp, a byte_offset or NULL strides): the script makes that tensor itself with
    ctypes (a small producer object whose __dlpack__ returns the capsule), imports it, and prints
    what the library read back against what was handed, and how often the deleter was called;
  - producer cases (an export of an array of a dtype and layout): the script makes the array,
    calls `__dlpack__` as the case did (with max_version=(1, 3) for a versioned case, without
    for a legacy one), prints the struct behind the capsule read with ctypes, reads the
    elements through it, and drops the capsule (its destructor calls the deleter: a crash in
    the deleter shows there);
  - pair cases: the producer library makes the array, the consumer library's from_dlpack
    imports it, and the script compares both arrays' elements read through DLPack.
For the other families no script is written; DIR/README.md lists those results and why.
File names: <case id>__<subject>[__<peer>].py (README.md says which library each belongs to).
"""
import os
import re

from . import libraries

UNEXPECTED = ("fail", "crash", "timeout", "error")

# How each library makes an array of n elements 0..n-1 of a dtype, shaped: (import, expression);
# {dt} is the dtype's name, {n} the count, {shape} a tuple. And how it imports {x}. Both from the
# library table (validator/libraries.tsv: make, import, from); dpnp's arrays are on its SYCL
# device (run the script with scripts/oneapi.sh's python-oneapi).
_MAKE, _FROM = libraries.recipes()
# Non-contiguous layouts, as views (only where the library has NumPy-style views).
_LAYOUT = {
    "numpy": {"fortran": "np.asfortranarray({a})", "strided": "np.repeat({a}, 2, axis=-1)[..., ::2]",
              "reversed": "np.ascontiguousarray({a}[::-1])[::-1]", "offset": "np.concatenate([{a}.ravel()[:1], {a}.ravel()])[1:].reshape({a}.shape)",
              "broadcast": "np.lib.stride_tricks.as_strided({a}[0].copy(), {a}.shape, (0,) + {a}[0].strides, writeable=True)"},
    "torch": {"fortran": "{a}.t().contiguous().t()", "strided": "{a}.repeat_interleave(2, dim=-1)[..., ::2]",
              "offset": "torch.cat([{a}.reshape(-1)[:1], {a}.reshape(-1)])[1:].reshape({a}.shape)",
              "broadcast": "{a}[0].expand({a}.shape)"},
}

_DTYPES = {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "bool", "complex64", "complex128", "bfloat16"}

_HELPERS = r'''
# ---- the DLPack structs, read with ctypes (dlpack.h) -------------------------------------------
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


ctypes.pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p
ctypes.pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def describe(capsule):
    """Prints the struct behind a DLPack capsule; returns its DLTensor."""
    name = ctypes.pythonapi.PyCapsule_GetName(capsule)
    ptr = ctypes.pythonapi.PyCapsule_GetPointer(capsule, name)
    print("capsule name:", name.decode())
    if name.startswith(b"dltensor_versioned"):
        m = DLManagedTensorVersioned.from_address(ptr)
        print(f"version: {m.version.major}.{m.version.minor}  flags: {m.flags:#x}  deleter set: {bool(m.deleter)}")
    else:
        m = DLManagedTensor.from_address(ptr)
        print(f"legacy struct  deleter set: {bool(m.deleter)}")
    t = m.dl_tensor
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = [t.strides[i] for i in range(t.ndim)] if t.strides else None
    print(f"device: ({t.device.device_type}, {t.device.device_id})  ndim: {t.ndim}  "
          f"dtype: code {t.dtype.code} bits {t.dtype.bits} lanes {t.dtype.lanes}")
    print(f"shape: {shape}  strides (elements): {strides}  byte_offset: {t.byte_offset}  data: {t.data:#x}")
    return t


def elements(t):
    """The tensor's elements in row-major order, read through data, byte_offset and strides."""
    shape = [t.shape[i] for i in range(t.ndim)]
    item = t.dtype.bits * t.dtype.lanes // 8
    if t.strides:
        strides = [t.strides[i] for i in range(t.ndim)]
    else:
        strides, step = [0] * t.ndim, 1
        for i in reversed(range(t.ndim)):
            strides[i], step = step, step * shape[i]
    out = []
    index = [0] * t.ndim
    total = 1
    for s in shape:
        total *= s
    for _ in range(total):
        off = t.byte_offset + sum(i * s for i, s in zip(index, strides)) * item
        out.append(ctypes.string_at(t.data + off, item).hex())
        for d in reversed(range(t.ndim)):
            index[d] += 1
            if index[d] < shape[d]:
                break
            index[d] = 0
    return out


# ---- a DLPack producer made with ctypes: the tensor the case handed the library ------------------
_FORMATS = {"float16": ("e", 2, 16), "float32": ("f", 2, 32), "float64": ("d", 2, 64), "int8": ("b", 0, 8),
            "int16": ("h", 0, 16), "int32": ("i", 0, 32), "int64": ("q", 0, 64), "uint8": ("B", 1, 8),
            "uint16": ("H", 1, 16), "uint32": ("I", 1, 32), "uint64": ("Q", 1, 64), "bool": ("?", 6, 8)}
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
ctypes.pythonapi.PyCapsule_New.restype = ctypes.py_object
ctypes.pythonapi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
deleter_calls = []


class Handed:
    """A 3x4 CPU tensor whose element (i, j) is i * 4 + j, laid out as asked, in a capsule."""

    def __init__(self, dtype, layout, versioned, major=1, minor=0, null_strides=False):
        import struct
        fmt, code, bits = _FORMATS[dtype]
        item = bits // 8
        rows, cols = 3, 4
        value = lambda k: bool(k % 2) if dtype == "bool" else k
        if layout == "broadcast":   # every row is row 0 (stride 0)
            logical = [[value(j) for j in range(cols)] for _ in range(rows)]
        else:
            logical = [[value(i * cols + j) for j in range(cols)] for i in range(rows)]
        self.expected = logical
        count = {"strided": rows * cols * 2, "offset": rows * cols + 1, "broadcast": cols}.get(layout, rows * cols)
        self.buf = (ctypes.c_uint8 * (count * item))()
        put = lambda k, v: struct.pack_into(fmt, self.buf, k * item, v)
        offset_items, strides = 0, (cols, 1)
        for i in range(rows):
            for j in range(cols):
                if layout == "fortran":
                    put(j * rows + i, logical[i][j]); strides = (1, rows)
                elif layout == "strided":
                    put(i * cols * 2 + j * 2, logical[i][j]); strides = (cols * 2, 2)
                elif layout == "reversed":   # rows stored last to first, element (0, 0) on the last row
                    put((rows - 1 - i) * cols + j, logical[i][j]); strides = (-cols, 1)
                elif layout == "offset":
                    put(1 + i * cols + j, logical[i][j]); offset_items = 1
                elif layout == "broadcast":
                    put(j, logical[i][j]); strides = (0, 1)
                else:
                    put(i * cols + j, logical[i][j])
        self.shape = (ctypes.c_int64 * 2)(rows, cols)
        self.strides = None if null_strides else (ctypes.c_int64 * 2)(*strides)
        data = ctypes.addressof(self.buf) + ((rows - 1) * cols * item if layout == "reversed" else 0)
        t = DLTensor(data, DLDevice(1, 0), 2, DLDataType(code, bits, 1),
                     ctypes.cast(self.shape, ctypes.POINTER(ctypes.c_int64)),
                     ctypes.cast(self.strides, ctypes.POINTER(ctypes.c_int64)) if self.strides else None,
                     offset_items * item)
        self.on_delete = DELETER(lambda p: deleter_calls.append(p))
        if versioned:
            self.managed = DLManagedTensorVersioned(DLPackVersion(major, minor), None,
                                                    ctypes.cast(self.on_delete, ctypes.c_void_p), 0, t)
            self.name = b"dltensor_versioned"
        else:
            self.managed = DLManagedTensor(t, None, ctypes.cast(self.on_delete, ctypes.c_void_p))
            self.name = b"dltensor"

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        print("the library called __dlpack__ with", kwargs)
        return ctypes.pythonapi.PyCapsule_New(ctypes.addressof(self.managed), self.name, None)
'''


def _shape(params):
    text = params.get("shape", "")
    if re.fullmatch(r"\d+(x\d+)*", text):
        return tuple(int(s) for s in text.split("x"))
    return {"scalar": (), "empty": (0,), "one": (1,), "ndim3": (2, 3, 4)}.get(text, (3, 4))


def _make_lines(lib, params, var):
    """Lines that import `lib` and make `var`, or a reason why not."""
    if lib not in _MAKE:
        return None, f"no array-making recipe for {lib}"
    dt = params.get("dtype", "float32")
    if dt not in _DTYPES or (dt == "bfloat16" and lib not in ("torch", "jax", "mlx", "paddle", "tensorflow")):
        return None, f"{lib} has no plain recipe for dtype {dt}"
    if dt == "bool":
        dt = "bool_" if lib in ("numpy", "jax") else "bool"
    shape = _shape(params)
    n = 1
    for s in shape:
        n *= s
    imp, expr = _MAKE[lib]
    lines = [imp, f"{var} = " + expr.format(n=n, dt=dt, shape=shape)]
    layout = params.get("layout", "contiguous")
    if layout not in ("contiguous", ""):
        recipe = _LAYOUT.get(lib, {}).get(layout)
        if not recipe or not shape:
            return None, f"no recipe for a {layout} {lib} array"
        lines.append(f"{var} = " + recipe.format(a=var))
    return lines, ""


def _header(r, rec, subject, peer):
    reqs = rec.get("requirements", {})
    lines = [f"Reproducer written by dlpack-validate --repro: case {r['id']}",
             f"on {subject}" + (f" (producer) -> {peer} (consumer)" if peer else "") + ".", ""]
    for q in r.get("requirements") or []:
        info = reqs.get(q, {})
        lines.append(f"Requirement {q} ({info.get('level', '?')}): {info.get('summary', '').replace('`', '')}")
    lines += ["", f"dlpack-validate saw: {r['status']}" + (f" in phase '{r['phase']}'" if r.get("phase") else "")
              + (f", {r['signal']}" if r.get("signal") else ""),
              f"  message:  {r.get('message', '')}"]
    if r.get("expected"):
        lines.append(f"  expected: {r['expected']}")
    if r.get("observed"):
        lines.append(f"  observed: {r['observed']}")
    lines += ["", "Only the standard library and the library under test are imported."]
    return "\n".join(x.replace('"""', "'''").replace("\\", "\\\\") for x in lines)


def _script(r, rec):
    subjects = rec["subjects"]
    lib = _lib(subjects[r["subject"]])
    params = r.get("params") or {}
    if r.get("peer") is not None:
        peer = _lib(subjects[r["peer"]])
        if peer not in _FROM:
            return None, f"no from_dlpack recipe for {peer}"
        make, why = _make_lines(lib, params, "x")
        if not make:
            return None, why
        consumer_import = _MAKE[peer][0]
        body = make + ([consumer_import] if consumer_import not in make else []) + [
            "print('producer:', type(x).__module__, type(x).__name__)",
            "def read(a):",
            "    try:",
            "        capsule = a.__dlpack__()",
            "    except BufferError as e:  # e.g. a read-only import: read a copy of it",
            "        print('re-export refused:', e, '- reading a copy')",
            "        capsule = a.copy().__dlpack__()",
            "    return elements(describe(capsule))  # the capsule lives until the elements are read",
            "before = read(x)",
            "y = " + _FROM[peer].format(x="x"),
            "print('consumer made:', type(y).__module__, type(y).__name__)",
            "after = read(y)",
            "print('elements equal:', before == after)",
            "if before != after:",
            "    print('producer elements:', before)",
            "    print('consumer elements:', after)"]
        return body, ""
    if r["id"].startswith("consumer."):
        return _consumer_script(r, lib, params)
    if r["id"].startswith("python."):
        return _protocol_script(r, lib, params)
    if not r["id"].startswith(("producer.", "python.producer.")):
        return None, "not a producer, consumer or pair case (no standalone recipe for this family yet)"
    make, why = _make_lines(lib, params, "x")
    if not make:
        return None, why
    versioned = params.get("version", "versioned") != "legacy"
    call = "x.__dlpack__(max_version=(1, 3))" if versioned else "x.__dlpack__()"
    body = make + [
        f"capsule = {call}",
        "t = describe(capsule)",
        "print('elements (hex, row-major):', elements(t)[:16])",
        "print('dropping the unconsumed capsule: its destructor calls the deleter')",
        "sys.stdout.flush()",
        "del capsule",
        "print('deleter returned')"]
    return body, ""


# consumer cases whose tensor the script can make: id prefix -> extra Handed() arguments
_CONSUMER = {
    "consumer.roundtrip.": {}, "consumer.layout.": {}, "consumer.byte_offset.": {},
    "consumer.null_strides.": {"null_strides": True},
    "consumer.version.major0_refused": {"major": 0, "versioned": True},
    "consumer.version.major2_refused": {"major": 2, "versioned": True},
    "consumer.version.minor_ahead": {"minor": 99, "versioned": True},
}


def _consumer_script(r, lib, params):
    extra = next((v for k, v in _CONSUMER.items() if r["id"].startswith(k)), None)
    if extra is None:
        return None, "a consumer case without a standalone recipe yet (its tensor is special)"
    if lib not in _FROM:
        return None, f"no from_dlpack recipe for {lib}"
    dtype = params.get("dtype", "float32")
    layout = params.get("layout", "contiguous")
    if dtype not in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                     "uint32", "uint64", "bool"):
        return None, f"no recipe for a {dtype} tensor"
    if params.get("shape") not in (None, "", "3x4") or layout not in (
            "contiguous", "fortran", "strided", "reversed", "offset", "broadcast"):
        return None, "no recipe for this tensor's shape or layout"
    versioned = extra.pop("versioned", params.get("version", "versioned") != "legacy")
    args = ", ".join([repr(dtype), repr(layout), repr(versioned)] + [f"{k}={v!r}" for k, v in extra.items()])
    imp = _MAKE[lib][0]
    return [
        imp,
        f"producer = Handed({args})",
        "print('handed the library:', producer.name.decode(), 'tensor, expected elements', producer.expected)",
        "sys.stdout.flush()",
        "y = " + _FROM[lib].format(x="producer"),
        "print('imported:', type(y).__module__, type(y).__name__)",
        "try:",
        "    got = y.tolist()",
        "except Exception as e:  # noqa: BLE001",
        "    got = f'(tolist raised {type(e).__name__}: {e})'",
        "print('read back:', got)",
        "print('elements as handed:', got == producer.expected)",
        "del y",
        "import gc; gc.collect()",
        "print('deleter calls:', len(deleter_calls))"], ""


def _request_kwargs(params):
    """python.request.*: the keywords the case passed (its axes), as Python source."""
    kw = []
    mv = params.get("max_version", "mv_absent")
    mvs = {"mv_1_0": "(1, 0)", "mv_1_99": "(1, 99)", "mv_2_0": "(2, 0)", "mv_own": "(1, 3)", "mv_none": "None"}
    if mv in mvs:
        kw.append(f"max_version={mvs[mv]}")
    cp = params.get("copy", "")
    kw += {"copy_true": ["copy=True"], "copy_false": ["copy=False"], "copy_none": ["copy=None"]}.get(cp, [])
    dev = params.get("dl_device", "")
    kw += {"dev_none": ["dl_device=None"], "dev_same": ["dl_device=(1, 0)"], "dev_cuda": ["dl_device=(2, 0)"]}.get(dev, [])
    st = params.get("stream", "")
    kw += {"stream_none": ["stream=None"], "stream_m1": ["stream=-1"], "stream_1": ["stream=1"],
           "stream_2": ["stream=2"]}.get(st, [])
    return ", ".join(kw)


# Python-protocol cases with a plain recipe: id (or prefix) -> the call, as Python source on `x`.
_PROTOCOL = {
    "python.device.dl_device_unserveable": "x.__dlpack__(dl_device=(7, 0))",
    "python.kw.copy_true": "x.__dlpack__(copy=True)",
    "python.kw.copy_false": "x.__dlpack__(copy=False)",
    "python.kw.copy_none.zero_copy": "x.__dlpack__()",
    "python.capsule.name.versioned": "x.__dlpack__(max_version=(1, 3))",
    "python.capsule.name.legacy": "x.__dlpack__()",
    "python.kw.keywords_accepted": "x.__dlpack__(stream=None, max_version=(1, 3), dl_device=(1, 0), copy=None)",
}


def _protocol_script(r, lib, params):
    if r["id"].startswith("python.request."):
        call = f"x.__dlpack__({_request_kwargs(params)})"
        tensor = params.get("tensor", "contiguous")
        shape = {"scalar": "", "empty": "0x3", "large": "1024x1024"}.get(tensor, "3x4")
        layout = tensor if tensor in ("strided", "offset") else "contiguous"
        make_params = {"dtype": "float32", "shape": shape, "layout": layout}
    elif r["id"] in _PROTOCOL:
        call = _PROTOCOL[r["id"]]
        make_params = {"dtype": "float32"}
    else:
        return None, "a Python-protocol case without a standalone recipe yet"
    if make_params.get("shape") == "":
        make_params["shape"] = "scalar"
    make, why = _make_lines(lib, make_params, "x")
    if not make:
        return None, why
    if params.get("source") == "read_only":
        return None, "no plain recipe for a read-only array"
    return make + [
        "def own_address(a):",
        "    for name in ('__array_interface__', '__sycl_usm_array_interface__', '__cuda_array_interface__'):",
        "        ai = getattr(a, name, None)",
        "        if ai: return ai['data'][0]",
        "    return a.data_ptr() if hasattr(a, 'data_ptr') else None",
        "src = own_address(x)",
        f"print('calling {call}')",
        "try:",
        f"    capsule = {call}",
        "except Exception as e:  # noqa: BLE001  (its type is what the requirement is about)",
        "    print('raised', type(e).__module__ + '.' + type(e).__qualname__, ':', e)",
        "    print('is a BufferError:', isinstance(e, BufferError))",
        "    sys.exit(0)",
        "t = describe(capsule)",
        "print('source data address:', hex(src) if src else 'unknown',",
        "      '-> the export', 'aliases it' if src == t.data + t.byte_offset else 'is elsewhere (a copy)')"], ""


def _lib(subject):
    name = subject.get("name", "")
    lib = name.rpartition(" ")[0] if " " in name and name.rpartition(" ")[2][:1].isdigit() else name
    return lib.split("[")[0]


def write(record, out_dir):
    """Writes the reproducers of `record`'s unexpected Python results into out_dir; returns
    (written, not_written) as lists of (case label, path or reason)."""
    os.makedirs(out_dir, exist_ok=True)
    written, skipped = [], []
    subjects = record.get("subjects", [])
    for r in record.get("results", []):
        if r.get("status") not in UNEXPECTED:
            continue
        if not (0 <= r.get("subject", -1) < len(subjects)) or subjects[r["subject"]].get("kind") != "python":
            continue
        subject = subjects[r["subject"]].get("name", "?")
        peer = subjects[r["peer"]].get("name", "?") if r.get("peer") is not None else ""
        label = r["id"] + f" [{subject}" + (f" -> {peer}]" if peer else "]")
        body, why = _script(r, record)
        lib = _lib(subjects[r["subject"]])
        if not body and lib not in _MAKE and lib not in _FROM:
            why = (f"{lib} is none of the libraries --repro has recipes for ({', '.join(sorted(_MAKE))}): a "
                   f"package tested through a custom adapter (MODULE:ATTR) or the generic mode gets no script; "
                   f"run the case alone with the command the report prints")
        if not body:
            skipped.append((label, why))
            continue
        safe = lambda s: re.sub(r"[^A-Za-z0-9_.+-]", "_", s)
        name = f"{r['id']}__{safe(subject)}" + (f"__{safe(peer)}" if peer else "") + ".py"
        text = ('#!/usr/bin/env python3\n"""' + _header(r, record, subject, peer) + '\n"""\nimport ctypes\nimport sys\n'
                + _HELPERS + "\n\n# ---- the behaviour ----------------------------------------------------------------------\n"
                + "\n".join(body) + "\n")
        path = os.path.join(out_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        written.append((label, path))
    with open(os.path.join(out_dir, "README.md"), "w", encoding="utf-8") as f:
        f.write("# Reproducers written by dlpack-validate --repro\n\n")
        f.write("Each script imports only the standard library and the library (or, for a pair case, the two "
                "libraries) it is about; run it with the interpreter that has them.\n\n")
        for label, path in written:
            f.write(f"- `{os.path.basename(path)}`: {label}\n")
        if skipped:
            f.write("\nNo script for these unexpected results:\n\n")
            for label, why in skipped:
                f.write(f"- {label}: {why}\n")
    return written, skipped
