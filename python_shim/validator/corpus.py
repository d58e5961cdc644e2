"""validator.corpus: DLPack edge cases, ready for any library's own tests (docs/corpus.md).

The producers the validator feeds a consumer with, as objects a test suite can hand to its own
``from_dlpack``: legal edge cases a consumer has to take (zero-size tensors with NULL data and
every stride convention, NULL strides, 0-d tensors with NULL shape, byte_offset views, negative
and zero strides, unaligned data, read-only tensors, every dtype code, both capsule kinds) and
known-bad ones it has to refuse (major 0 and 2, unknown or malformed dtypes, used or wrong
capsule names). Each producer counts the calls of its deleter; each case names the requirement
it exercises (spec/requirements.md) and how firmly the spec speaks::

    import mylib
    from validator import corpus

    def test_from_dlpack(dlpack_edge_case):        # the pytest plugin's fixture: every legal case
        dlpack_edge_case.check(mylib.from_dlpack)  # imports, reads back, counts the deleter

``check`` raises ``EdgeCaseFailure`` (an AssertionError) where the spec's MUST is broken, warns
``DLPackWarning`` where a SHOULD is, and under pytest skips, saying why, where the consumer
refused lawfully or the case could not be exercised (a versioned tensor for a consumer that never
asks for one). Outside pytest it returns an ``Outcome``.

The ids (``zero_size.null_data.zeros.legacy``) are stable: a library may xfail a case by id
(``corpus.params(xfail={ID: reason})``). The tensors are the validator's own (MadeTensor):
values from a fixed pattern, data poisoned (0xDB) once the deleter runs, read-only data in pages
that fault on a write, and the versioned struct of a major-0/2 tensor ending where a guard page
begins, so a consumer that reads past the version prefix faults there (VER-03).
"""
import gc
import sys
import time
import warnings

from . import _dlpack_validate

__all__ = ["EdgeCase", "EdgeCaseFailure", "Outcome", "Producer", "DLPackWarning", "cases", "get", "params",
           "legal_cases", "bad_cases"]

READ_ONLY = 1          # DLPACK_FLAG_BITMASK_READ_ONLY
SUBBYTE_PADDED = 4     # DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
KDL_CPU, KDL_VULKAN = 1, 7

# Every (code, bits) DLPack 1.3 defines, and the provisional bcomplex32 of DLPack's main branch.
DTYPES = {
    "int8": (0, 8), "int16": (0, 16), "int32": (0, 32), "int64": (0, 64),
    "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
    "float16": (2, 16), "float32": (2, 32), "float64": (2, 64), "bfloat16": (4, 16),
    "complex64": (5, 64), "complex128": (5, 128), "bool": (6, 8),
    "float8_e3m4": (7, 8), "float8_e4m3": (8, 8), "float8_e4m3b11fnuz": (9, 8), "float8_e4m3fn": (10, 8),
    "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8), "float8_e5m2fnuz": (13, 8),
    "float8_e8m0fnu": (14, 8), "float6_e2m3fn": (15, 6), "float6_e3m2fn": (16, 6), "float4_e2m1fn": (17, 4),
    "bcomplex32": (18, 32),
}


class DLPackWarning(UserWarning):
    """A consumer broke a SHOULD of the DLPack spec on a corpus case."""


class EdgeCaseFailure(AssertionError):
    """A consumer broke a MUST of the DLPack spec on a corpus case."""


class Outcome:
    """What ``EdgeCase.check`` saw: ``status`` is "imported", "refused" (a refusal the spec
    allows), "not-exercised" (with why) or, for a bad case, "refused" as it must be."""

    def __init__(self, case, status, text):
        self.case, self.status, self.text = case, status, text

    def __repr__(self):
        return f"Outcome({self.case.id!r}, {self.status!r}, {self.text!r})"


class Producer:
    """A DLPack producer holding one validator-made tensor: ``__dlpack__`` hands it out once, in
    the capsule kind its case says. ``calls`` lists the calls made on it (name, keywords);
    ``deleter_calls`` counts the tensor's deleter calls (0 until something handed out and
    released it)."""

    def __init__(self, case):
        self.case = case
        self.calls = []
        self.tensor = None

    def __dlpack_device__(self):
        self.calls.append(("__dlpack_device__", {}))
        return self.case.device

    def __dlpack__(self, *args, **kw):
        self.calls.append(("__dlpack__", dict(kw)))  # the keywords exactly as passed
        if args:
            raise TypeError(f"__dlpack__() takes no positional arguments ({len(args)} given)")
        unknown = sorted(set(kw) - {"stream", "max_version", "dl_device", "copy"})
        if unknown:
            raise TypeError(f"__dlpack__() got an unexpected keyword argument '{unknown[0]}'")
        max_version, dl_device, copy = kw.get("max_version"), kw.get("dl_device"), kw.get("copy")
        if self.tensor is not None:
            raise BufferError("this corpus producer hands out its tensor once; make another with case.producer()")
        if copy is True:
            raise BufferError("the corpus producers make no copies (copy=True was asked)")
        if dl_device is not None and tuple(dl_device) != tuple(self.case.device):
            raise BufferError(f"the corpus producer's tensor is on {self.case.device}, not {tuple(dl_device)}")
        if self.case.kind == "versioned" and not _asks_versioned(max_version):
            raise BufferError("this corpus case is a versioned tensor (dltensor_versioned) and __dlpack__ was "
                              f"called with max_version={max_version!r}, which does not ask for one")
        self.tensor = self.case._make()
        return self.tensor.capsule(self.case.capsule_name)

    @property
    def deleter_calls(self):
        return 0 if self.tensor is None else self.tensor.deleter_calls

    @property
    def handed_out(self):
        return self.tensor is not None

    @property
    def expected(self):
        """The bytes a correct import reads back, row-major compact (packed for sub-byte types)."""
        return self.case._make().expected if self.tensor is None else self.tensor.expected


def _asks_versioned(max_version):
    try:
        return max_version is not None and int(max_version[0]) >= 1
    except (TypeError, ValueError, IndexError):
        return False


class EdgeCase:
    """One corpus case. ``id`` (stable), ``rule`` (requirement id), ``quote`` (what the spec says),
    ``legal`` (a lawful tensor a consumer must take, or a bad one it must refuse), ``kind``
    ("legacy" or "versioned"), ``shape``, ``dtype`` ((code, bits, lanes)), ``summary``.
    ``accept``/``refuse``: how firmly the spec asks it ("must", "should" or "may")."""

    def __init__(self, id, rule, quote, summary, *, legal, kind, accept="must", refuse="must", deletes=1,
                 shape=(3, 4), dtype=(2, 32, 1), capsule_name=None, device=(KDL_CPU, 0), needs=None, **build):
        self.id, self.rule, self.quote, self.summary = id, rule, quote, summary
        self.legal, self.kind, self.accept, self.refuse = legal, kind, accept, refuse
        self.deletes = deletes
        self.needs = needs  # the family of a plainer case whose refusal makes this one's lawful
        self.shape, self.dtype, self.device = tuple(shape), tuple(dtype), tuple(device)
        self.capsule_name = capsule_name or ("dltensor_versioned" if kind == "versioned" else "dltensor")
        self.build = build

    def __repr__(self):
        return f"<corpus case {self.id}: {self.summary} ({self.rule})>"

    def _make(self):
        return _dlpack_validate.corpus_tensor(self.dtype, list(self.shape), versioned=self.kind == "versioned",
                                              device=self.device, **self.build)

    def producer(self):
        """A fresh producer of this case's tensor (one capsule each)."""
        return Producer(self)

    # ---- judging a consumer ------------------------------------------------------------------
    def _fail(self, what, rule=None):
        rule = rule or self.rule
        raise EdgeCaseFailure(f"[{rule} MUST] corpus case {self.id} ({self.summary}): {what}. "
                              f"The spec: {self.quote}")

    def _warn(self, what, rule=None, quote=None):
        rule = rule or self.rule
        warnings.warn(DLPackWarning(f"[{rule} SHOULD] corpus case {self.id} ({self.summary}): {what}. "
                                    f"The spec: {quote or self.quote}"), stacklevel=3)

    def _done(self, status, text):
        return Outcome(self, status, text)

    def _finish(self, outcome):
        """Under pytest, a lawful refusal of a legal case and a case that could not reach the
        consumer are skips saying why; a bad case refused is a pass."""
        if outcome.status != "imported" and "pytest" in sys.modules and not (
                outcome.status == "refused" and not self.legal):
            from .pytest_plugin import _skip
            _skip(f"corpus case {self.id}: {outcome.text}")
        return outcome

    def check(self, from_dlpack, *, to_bytes=None, settle=0.5, isolate=False):
        """Hand a fresh producer to ``from_dlpack`` and judge what it did by the spec.

        ``to_bytes(array) -> bytes``: the imported array's elements, row-major compact (default:
        the array's own ``__dlpack__`` read by the validator's inspector, else ``memoryview``).
        ``settle``: seconds a release may take after the array dies (some consumers release on a
        thread of their own, which is lawful); the wait ends as soon as the count is reached.
        ``isolate``: run the import in a forked child process, so that a consumer that crashes
        (a fault, an abort) fails this case, naming the signal, instead of ending the test run."""
        if isolate:
            return self._finish(self._forked(from_dlpack, to_bytes, settle))
        return self._finish(self._judge(from_dlpack, to_bytes, settle))

    def _forked(self, from_dlpack, to_bytes, settle):
        import json
        import os
        import signal
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: judge, send what was seen, never return into the caller
            os.close(r)
            try:
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always")
                    try:
                        o = self._judge(from_dlpack, to_bytes, settle)
                        msg = {"status": o.status, "text": o.text}
                    except EdgeCaseFailure as e:
                        msg = {"failure": str(e)}
                    except BaseException as e:
                        msg = {"error": f"{type(e).__name__}: {e}"}
                msg["warnings"] = [str(x.message) for x in seen if issubclass(x.category, DLPackWarning)]
                os.write(w, json.dumps(msg).encode())
            finally:
                os._exit(0)
        os.close(w)
        chunks = []
        while True:
            b = os.read(r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(r)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            self._fail(f"from_dlpack (or the release after it) killed the process with "
                       f"{signal.Signals(sig).name} (the case ran in a child process: isolate=True)")
        msg = json.loads(b"".join(chunks).decode() or "{}")
        for text in msg.get("warnings", []):
            warnings.warn(DLPackWarning(text), stacklevel=3)
        if "failure" in msg:
            raise EdgeCaseFailure(msg["failure"])
        if "error" in msg or "status" not in msg:
            raise RuntimeError(f"corpus case {self.id}: the child process ended without a verdict: "
                               f"{msg.get('error', 'no message')}")
        return Outcome(self, msg["status"], msg["text"])

    def _judge(self, from_dlpack, to_bytes, settle):
        p = self.producer()
        refused, refused_buffer = None, False
        held = []  # the imported array, held only here, so that dropping it releases it
        try:
            held.append(from_dlpack(p))
        except Exception as e:  # the consumer's refusal (or a failure inside it)
            refused = f"{type(e).__name__}: {e}"
            refused_buffer = isinstance(e, BufferError)
        if not p.handed_out:
            return self._check_unhanded(p, refused)
        if refused is not None:
            return self._check_refused(p, refused, refused_buffer, settle, from_dlpack)
        return self._check_imported(p, held, to_bytes, settle)

    def _check_unhanded(self, p, refused):
        asked = [kw for name, kw in p.calls if name == "__dlpack__"]
        if refused is None:
            self._fail("from_dlpack returned without calling __dlpack__ on the producer", "CAP-05")
        if self.kind == "versioned" and asked and not any(_asks_versioned(kw.get("max_version")) for kw in asked):
            return self._done("not-exercised", "the consumer never asks for a versioned capsule "
                              f"(its __dlpack__ calls: {asked}), so a versioned tensor cannot reach it")
        return self._done("not-exercised", f"from_dlpack raised before taking the capsule: {refused} "
                          f"(its calls on the producer: {p.calls})")

    def _await_deletes(self, p, want, settle):
        # One collection frees what a reference cycle holds; after it, only a release on another
        # thread is left to wait for, and that needs no collection (one every 5 ms for half a
        # second spent 0.36 s of CPU a case where the deleter never runs). A last one at the end.
        gc.collect()
        end = time.monotonic() + settle
        while p.deleter_calls < want and time.monotonic() < end:
            time.sleep(0.005)
        if p.deleter_calls < want and settle > 0:
            gc.collect()
        return p.deleter_calls

    def _check_refused(self, p, refused, refused_buffer, settle, from_dlpack=None):
        n = self._await_deletes(p, self.deletes, settle)
        if n != self.deletes:
            rule = "CAP-06" if self.deletes == 0 else "DEL-08"
            self._fail(f"from_dlpack refused ({refused}) and the deleter then ran {n} time(s); "
                       f"{self.deletes} expected once the capsule is gone", rule)
        if self.legal and self.needs:
            # A refusal of what the case is about only if the consumer takes the plainer tensor
            # (a library without 0-d arrays refuses every 0-d tensor: that is scalar.plain's to judge).
            twin = get(f"{self.needs}.{self.kind}")
            tp = twin.producer()
            try:
                arr = from_dlpack(tp)
                del arr
            except Exception as e:
                why = f"{type(e).__name__}: {e}"
                return self._done("refused", f"the consumer refuses the plainer case {twin.id} too ({why}), so "
                                             f"what it does with this one cannot be told apart; {twin.id} judges it")
        if self.legal and self.accept == "must":
            self._fail(f"from_dlpack refused a tensor the spec says a consumer takes: {refused}")
        if self.legal and self.accept == "should":
            self._warn(f"from_dlpack refused: {refused}")
        if not refused_buffer and self.rule == "LAYOUT-11":
            self._warn(f"refused with {refused}, not BufferError")
        elif not refused_buffer and not self.legal and self.rule.split("-")[0] in ("DTYPE", "DEV", "VER"):
            self._warn(f"refused with {refused}, not BufferError", "ERR-07", quote=_Q["ERR-07"])
        if not self.legal:
            return self._done("refused", refused)
        return self._done("refused", f"refused, which the spec allows here: {refused}")

    def _check_imported(self, p, held, to_bytes, settle):
        array = held.pop()
        if not self.legal:
            if self.refuse == "must":
                self._fail("from_dlpack imported a tensor the spec says a consumer refuses")
            self._warn("from_dlpack imported a tensor the spec says a consumer refuses")
            del array
            self._await_deletes(p, self.deletes, settle)
            return self._done("imported", "imported")
        n = p.deleter_calls
        if n > 1:
            self._fail(f"the deleter ran {n} times while the imported array is alive", "DEL-02")
        shape = getattr(array, "shape", None)
        if shape is not None:
            try:
                got = tuple(int(s) for s in shape)
            except (TypeError, ValueError):
                got = None
            if got is not None and got != self.shape:
                self._fail(f"the imported array has shape {got}, the tensor {self.shape}")
        got_dtype = None
        try:
            if to_bytes:
                data = to_bytes(array)
            else:
                data, got_dtype = _read_back(array)
        except _Unreadable as e:
            data = None
            unreadable = str(e)
        if got_dtype is not None and got_dtype != self.dtype:
            self._fail(f"the imported array's dtype reads back as {got_dtype}, the tensor's is {self.dtype}")
        if data is not None and bytes(data) != p.expected:
            self._fail("the imported array holds other values than the tensor: " + _mismatch(p.expected, bytes(data)))
        if self.build.get("flags", 0) & READ_ONLY and p.tensor.read_only_data_written:
            self._fail("from_dlpack wrote into a READ_ONLY tensor's data", "FLAG-04")
        del array
        n = self._await_deletes(p, 0 if self.build.get("null_deleter") else 1, settle)
        if self.build.get("null_deleter"):
            return self._done("imported", "imported; the NULL deleter was not called (there is none)")
        if n != 1:
            self._fail(f"once the imported array is gone the deleter ran {n} time(s), 1 expected "
                       f"(waited up to {settle} s after gc.collect())", "DEL-02")
        if data is None:
            return self._done("imported", "imported and released once; values not read: " + unreadable)
        return self._done("imported", "imported with the right values, released once")


class _Unreadable(Exception):
    pass


def _read_back(array):
    """(elements, dtype) of the array: its elements row-major compact through its own __dlpack__
    (read by the validator's inspector) with the (code, bits, lanes) it exports, else through the
    buffer protocol (dtype None)."""
    if hasattr(array, "__dlpack__"):
        for kw in ({"max_version": (1, 3)}, {}):
            try:
                cap = array.__dlpack__(**kw)
            except TypeError:
                continue
            except BufferError as e:
                raise _Unreadable(f"the array's __dlpack__ raised BufferError: {e}") from None
            try:
                dtype = _dlpack_validate.read_capsule(cap).get("dtype")
                return _dlpack_validate.capsule_elements(cap), (tuple(dtype) if dtype is not None else None)
            except NotImplementedError as e:
                raise _Unreadable(str(e)) from None
    try:
        return memoryview(array).tobytes(), None
    except TypeError:
        raise _Unreadable(f"a {type(array).__name__} has neither __dlpack__ nor the buffer protocol; "
                          "pass check(..., to_bytes=...)") from None


def _mismatch(want, got):
    if len(want) != len(got):
        return f"{len(got)} bytes, {len(want)} expected"
    i = next(i for i in range(len(want)) if want[i] != got[i])
    return f"first difference at byte {i}: {got[i]:#04x}, {want[i]:#04x} expected (of {len(want)} bytes)"


# ---- the catalogue -------------------------------------------------------------------------------
_Q = {
    "LAYOUT-03": "a consumer reads NULL strides on a legacy tensor, or one declaring 1.1 or older, as compact "
                 "row-major (accepting them under 1.2 or later as well is a should)",
    "LAYOUT-06": "a 0-d tensor may come with NULL shape and NULL strides; a consumer has to accept that and "
                 "take its single element from data + byte_offset",
    "LAYOUT-08": "the consumer offsets data by byte_offset",
    "LAYOUT-09": "many producers do not align data to 256 bytes and consumers should not count on it: an "
                 "unaligned tensor is imported or refused cleanly, never misread",
    "LAYOUT-10": "a consumer must take NULL data whenever some shape[i] == 0",
    "LAYOUT-11": "negative and zero strides can be expressed; the consumer imports them with the right values "
                 "or raises BufferError, and never misreads them",
    "LAYOUT-04": "strides are counted in elements, never in bytes",
    "DEL-03": "a NULL deleter is allowed, so the consumer checks it before calling",
    "VER-04": "the consumer should accept a tensor whose minor is newer than its own as long as every field "
              "value is one it knows",
    "VER-03": "when a versioned tensor carries a major other than the consumer's, the consumer reads nothing "
              "past the fixed prefix and still sees to it that the deleter runs",
    "FLAG-04": "a consumer that has read-only arrays imports a READ_ONLY tensor as read-only; one without "
               "them ignores the flag, which is better than raising",
    "FLAG-08": "a consumer that cannot read padded sub-byte data refuses tensors carrying flag 4 instead of "
               "treating them as packed",
    "DTYPE-06": "the consumer does not import an FP6 tensor whose bits is not 6, nor an FP4 tensor whose "
                "bits is not 4",
    "DTYPE-08": "an unknown code, or a (code, bits, lanes) combination the consumer does not support, is "
                "answered with BufferError rather than read as something else",
    "DTYPE-09": "kDLOpaqueHandle data has a meaning only under an agreement between the two sides; without "
                "one the consumer refuses it",
    "CAP-06": "a capsule that was already consumed, or that has a wrong name, is refused and no deleter is "
              "called",
    "DEV-04": "a consumer handed a device it cannot use raises BufferError",
    "ERR-07": "when the consumer turns a tensor down for its device, dtype, lanes, ndim or version, the "
              "exception is BufferError",
}

_SHAPES = {1: (5,), 2: (3, 4), 3: (2, 3, 4), 4: (2, 1, 3, 2)}
_KINDS = ("legacy", "versioned")


def _legal():
    out = []

    def add(id, rule, summary, kind, **kw):
        out.append(EdgeCase(f"{id}.{kind}", rule, _Q[rule], summary, legal=True, kind=kind, **kw))

    for kind in _KINDS:
        # zero-size: NULL or real data, and each stride convention producers use for no elements
        for data in ("null_data", "data"):
            for conv, strides in (("compact", [3, 1]), ("zeros", [0, 0]), ("shape", [0, 3]), ("odd", [7, -2]),
                                  ("null", None)):
                kw = {"null_data": data == "null_data"}
                if strides is None:
                    kw["null_strides"] = True
                    if kind == "versioned":
                        kw["version"] = (1, 1)  # NULL strides are lawful up to 1.1 (LAYOUT-02)
                else:
                    kw["strides"] = strides
                add(f"zero_size.{data}.{conv}", "LAYOUT-10",
                    f"a (0, 3) float32 tensor, {'NULL' if data == 'null_data' else 'non-NULL'} data, "
                    f"{'NULL strides' if strides is None else 'strides ' + str(tuple(strides))}", kind,
                    shape=(0, 3), **kw,
                    accept="must" if conv in ("compact", "null") or (data == "null_data" and conv != "odd") else "should")
        add("zero_size.trailing", "LAYOUT-10", "a (3, 0) float32 tensor with NULL data", kind, shape=(3, 0),
            null_data=True, strides=[1, 1])
        # NULL strides on every ndim
        for ndim, shape in _SHAPES.items():
            if kind == "legacy":
                add(f"null_strides.ndim{ndim}", "LAYOUT-03", f"a legacy {shape} tensor with NULL strides", kind,
                    shape=shape, null_strides=True)
            else:
                add(f"null_strides.ndim{ndim}.v1_1", "LAYOUT-03",
                    f"a {shape} tensor declaring 1.1 with NULL strides", kind, shape=shape, null_strides=True,
                    version=(1, 1))
                add(f"null_strides.ndim{ndim}.v1_3", "LAYOUT-03",
                    f"a {shape} tensor declaring 1.3 with NULL strides (deprecated; accepting is a should)",
                    kind, shape=shape, null_strides=True, version=(1, 3), accept="should")
        # 0-d
        add("scalar.null_shape", "LAYOUT-06", "a 0-d tensor with NULL shape and NULL strides", kind, shape=(),
            null_shape=True, null_strides=True, needs="scalar.plain")
        add("scalar.plain", "LAYOUT-06", "a 0-d tensor", kind, shape=(), accept="should")
        # byte_offset views: data at the buffer's start, the element byte_offset bytes on
        for ndim, shape in ((0, ()), (1, (5,)), (2, (3, 4))):
            add(f"byte_offset.ndim{ndim}", "LAYOUT-08", f"a {shape or '0-d'} tensor with byte_offset 64", kind,
                shape=shape, byte_offset=64, accept="should", needs="scalar.plain" if ndim == 0 else None)
        add("byte_offset.odd_int16", "LAYOUT-08", "an int16 (5,) tensor with byte_offset 6", kind, shape=(5,),
            dtype=(0, 16, 1), byte_offset=6, accept="should")
        # strides
        add("strides.negative", "LAYOUT-11", "axis 0 reversed: strides (-4, 1)", kind, layout="reversed",
            accept="may")
        add("strides.zero", "LAYOUT-11", "axis 0 broadcast: strides (0, 1)", kind, layout="broadcast",
            accept="may")
        add("strides.fortran", "LAYOUT-04", "column-major: strides (1, 3)", kind, layout="fortran", accept="may")
        add("strides.step2", "LAYOUT-04", "every second element: strides (8, 2)", kind, layout="strided",
            accept="may")
        # unaligned data
        add("unaligned.uint8_odd", "LAYOUT-09", "a uint8 (5,) tensor at an odd address", kind, shape=(5,),
            dtype=(1, 8, 1), misalign=1, accept="may")
        add("unaligned.int16_offset", "LAYOUT-09", "an int16 (5,) tensor at an odd address through byte_offset 3",
            kind, shape=(5,), dtype=(0, 16, 1), misalign=1, byte_offset=2, accept="may")
        add("deleter.null", "DEL-03", "a tensor with a NULL deleter", kind, null_deleter=True)
        for name, (code, bits) in DTYPES.items():
            add(f"dtype.{name}", "DTYPE-08", f"a (6,) {name} tensor", kind, shape=(6,), dtype=(code, bits, 1),
                accept="may")
    add("read_only", "FLAG-04", "a READ_ONLY tensor", "versioned", flags=READ_ONLY, accept="should")
    add("version.minor_ahead", "VER-04", "a tensor declaring version (1, 99)", "versioned", version=(1, 99),
        accept="should")
    add("dtype.float4_e2m1fn.padded", "FLAG-08", "a (6,) float4_e2m1fn tensor stored one element per byte "
        "(IS_SUBBYTE_TYPE_PADDED)", "versioned", shape=(6,), dtype=(17, 4, 1), flags=SUBBYTE_PADDED,
        padded_subbyte=True, accept="may")
    return out


def _bad():
    out = []

    def add(id, rule, summary, kind, **kw):
        out.append(EdgeCase(f"{id}.{kind}", rule, _Q[rule], summary, legal=False, kind=kind, **kw))

    add("version.major2", "VER-03", "a versioned tensor of major 2 (the struct past the prefix faults on read)",
        "versioned", version=(2, 0), guard_after_prefix=True)
    add("version.major0", "VER-03", "a versioned tensor of major 0 (the struct past the prefix faults on read)",
        "versioned", version=(0, 8), guard_after_prefix=True)
    for kind in _KINDS:
        add("dtype.code200", "DTYPE-08", "a (6,) tensor of dtype code 200", kind, shape=(6,), dtype=(200, 8, 1),
            refuse="should")
        add("dtype.float32_bits24", "DTYPE-08", "a (6,) tensor of dtype (2, 24, 1)", kind, shape=(6,),
            dtype=(2, 24, 1), refuse="should")
        add("dtype.float32x4", "DTYPE-08", "a (6,) tensor of dtype (2, 32, 4): four lanes", kind, shape=(6,),
            dtype=(2, 32, 4), refuse="should")
        add("dtype.float6_bits8", "DTYPE-06", "a (6,) float6_e2m3fn tensor with bits 8", kind, shape=(6,),
            dtype=(15, 8, 1))
        add("dtype.float4_bits8", "DTYPE-06", "a (6,) float4_e2m1fn tensor with bits 8", kind, shape=(6,),
            dtype=(17, 8, 1))
        add("dtype.opaque", "DTYPE-09", "a (6,) tensor of kDLOpaqueHandle (code 3, 64 bits)", kind, shape=(6,),
            dtype=(3, 64, 1), refuse="should")
        add("device.vulkan", "DEV-04", "a tensor labelled kDLVulkan", kind, device=(KDL_VULKAN, 0), refuse="should")
        used = "used_dltensor_versioned" if kind == "versioned" else "used_dltensor"
        add("capsule.used", "CAP-06", f"a capsule already named {used}", kind, capsule_name=used, deletes=0)
        add("capsule.wrong_name", "CAP-06", "a capsule named not_a_dltensor", kind, capsule_name="not_a_dltensor",
            deletes=0)
    return out


_CASES = None


def cases(*, legal=None, rule=None, kind=None):
    """The corpus cases in a fixed order, optionally only the legal (True) or bad (False) ones,
    one requirement's (``rule="LAYOUT-08"``) or one capsule kind's."""
    global _CASES
    if _CASES is None:
        _CASES = _legal() + _bad()
    return [c for c in _CASES
            if (legal is None or c.legal == legal) and (rule is None or c.rule == rule)
            and (kind is None or c.kind == kind)]


def legal_cases(**kw):
    return cases(legal=True, **kw)


def bad_cases(**kw):
    return cases(legal=False, **kw)


def get(case_id):
    """The case with this id (KeyError naming the close ones otherwise)."""
    for c in cases():
        if c.id == case_id:
            return c
    near = [c.id for c in cases() if c.id.split(".")[0] == case_id.split(".")[0]]
    raise KeyError(f"no corpus case {case_id!r}" + (f"; of that family: {', '.join(near)}" if near else ""))


def params(*, legal=True, xfail=None, **kw):
    """pytest.param per case (id = the case's id), with ``xfail={ID: reason}`` marked xfail."""
    import pytest
    xfail = dict(xfail or {})
    unknown = [k for k in xfail if k not in {c.id for c in cases()}]
    if unknown:
        raise KeyError(f"xfail names no corpus case: {', '.join(unknown)}")
    out = []
    for c in cases(legal=legal, **kw):
        marks = [pytest.mark.xfail(reason=xfail[c.id], raises=EdgeCaseFailure)] if c.id in xfail else []
        out.append(pytest.param(c, id=c.id, marks=marks))
    return out
