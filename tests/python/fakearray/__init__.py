"""fakearray: a small DLPack array library for testing the Python shim (not a real package).

``fakearray.Adapter(bugs=())`` is its adapter (docs/design.md §4); ``fakearray.variants`` names one
adapter per planted bug (``python -m validator fakearray.variants:no_destructor``)."""
import math

from . import _fakearray

KNOWN_BUGS = frozenset({
    "versioned_named_legacy", "no_destructor", "destructor_ignores_used", "buffer_not_kept",
    "deleter_thread_affine", "deleter_sets_error", "deleter_needs_interpreter",
    "none_gives_versioned", "old_major_versioned", "major2_type_error", "no_dl_device_kw",
    "accepts_bad_args", "copy_true_aliases", "copy_false_copies", "default_copies",
    "device_id_wrong", "dl_device_ignored", "exports_big_endian", "no_read_only_flag",
    "stream_accepted", "same_capsule", "legacy_struct_named_versioned",
    # only when keywords come together (python.request.*)
    "combo_read_only_dropped", "combo_copy_forgotten", "version_echoes_request",
    "device_and_stream_ignored", "minor_ahead_copy_forgotten",
    # the exchange API's dltensor_from_py_object leaves byte_offset unwritten
    "xapi_dltensor_skips_offset",
    # managed_tensor_from_py_object_no_sync returns 0 without writing *out
    "xapi_from_unwritten",
    # consumer (from_dlpack)
    "consumer_no_rename", "consumer_takes_any_capsule", "consumer_ignores_capsule_name",
    "consumer_no_major_check", "consumer_rejects_minor_ahead", "consumer_no_fallback",
    "consumer_copy_ignored", "consumer_copy_not_forwarded", "consumer_always_copies",
    "consumer_rejects_python_classes", "consumer_wraps_errors", "consumer_type_error_for_non_arrays",
    "consumer_rejection_value_error", "consumer_device_type_error", "consumer_deletes_on_refusal",
    "consumer_result_device_wrong", "consumer_device_query_late", "consumer_stream_on_cpu",
    "consumer_stream_zero_cuda", "consumer_rocm_stream_one", "consumer_deleter_early",
    "consumer_calls_null_deleter", "consumer_read_only_ignored", "consumer_stream_not_current",
    "consumer_device_cpu_wraps",
    # copy=True: copy not forwarded, and 64-byte aligned data imported in place (JAX 0.10)
    "consumer_copy_in_place_aligned",
    # an AssertionError for kDLCUDA/kDLROCM tensors, BufferError for other devices (torch 2.13 CPU)
    "consumer_gpu_assertion",
    # from_dlpack never calls __dlpack_device__ and passes no stream (NumPy 2.2-2.4): DEV-09
    "consumer_device_never_queried",
    # every __dlpack__ raises MemoryError: a failure, never a clean refusal (ERR-02)
    "export_memory_error",
    # int16 arrays refused with TypeError instead of BufferError (ERR-01)
    "refusal_type_error",
    # from_dlpack writes (the same value) into a READ_ONLY tensor's data: FLAG-04
    "consumer_writes_read_only",
    # only some inputs (python.input.*): >= 1 Ki non-compact elements read as compact; another
    # thread's import leaks; two imports alive at once share one release slot
    "consumer_large_strides_ignored", "consumer_thread_affine", "consumer_shared_release",
    # rank >= 4 exports with the last two strides swapped; another thread's export one element late
    "export_rank4_strides_swapped", "export_thread_affine",
    # the deleter frees nothing: each export keeps its buffer and bookkeeping for good (DEL-01)
    "export_leaks",
    # broad producer slips: strides in bytes; a 0-d array as shape (1,); uint8/bool as kDLInt
    "export_strides_in_bytes", "export_scalar_as_1d", "export_narrow_int_signed",
    # a value path that never saw a large or special value (tests/fixtures/narrow_values.h): an
    # export copy, or an import copy, keeps integers' low byte and turns infinities and NaN to 0
    "export_narrow_values", "import_narrow_values",
    # a versioned export's flags carry a bit no DLPack version defines (FLAG-01)
    "export_undefined_flag",
    # only some requests (python.request.*): a float32 copy labelled int32 (DTYPE-02); the deleter
    # of an export lent with copy=False or of a read-only array frees nothing (DEL-01)
    "copy_mislabels_dtype", "lent_export_leaks",
    # consumer side of the exchange API
    "consumer_xapi_no_major_check", "consumer_xapi_no_prev_walk", "consumer_xapi_no_null_check",
    "consumer_xapi_leaks", "consumer_xapi_instance_lookup",
    # producer side of the exchange API
    "xapi_on_instance", "xapi_int_v12", "xapi_null_from_py_object", "xapi_from_wrong_error",
    "xapi_from_disagrees", "xapi_dltensor_allocates", "xapi_to_leaks", "xapi_stream_null",
    # across devices (python.pair.device.*): an ext_dev tensor imported as a CPU array (DEV-07);
    # from_dlpack's device= accepted and dropped (DEV-08); dl_device=(1, 0) of an ext_dev array
    # refused (DEV-05)
    "consumer_ext_as_cpu", "consumer_device_cpu_ignored", "dl_device_cpu_refused",
    # an export asked with an ext_dev queue hands out memory whose queued writes have not run (STRM-05)
    "queue_not_ordered",
    # a second ext_dev device (device 1, as lawful_two_ext_devices has it): its arrays exported as
    # device 0's (DEV-01); imported onto device 0 (DEV-07)
    "second_device_exported_as_first", "import_lands_on_first_device",
    # copy=False, dl_device and the ext_dev heap; from_dlpack of a non-array
    "copy_false_copies_across_devices", "consumer_accepts_anything",
    # hostile: the capsule destructor segfaults (tests/python: the load is charged to CAP-03)
    "destructor_segfaults",
    # the deleter touches Python without taking the GIL (NumPy 1.23, broadcast arrays): DEL-06
    "deleter_without_gil",
    # lawful_copies_keep_memory's records, and the deleter of an export asked with copy=True frees
    # nothing (DEL-01, past what the package's own copies keep)
    "copy_export_leaks",
})

# Lawful behaviours: a correct library doing something unusual the spec allows. Each must run
# with no fail, crash, timeout or error (tests/python/CMakeLists.txt).
LAWFUL = frozenset({
    "lawful_legacy_under_max_version",   # 'dltensor' for max_version=(1, 3): "or of a different version"
    "lawful_rename_refuse_delete",       # takes ownership (rename), refuses, deletes once
    "lawful_xapi_runtime_error",         # from_py_object refuses with RuntimeError ("should be a BufferError")
    "lawful_read_only_legacy_exported",  # exports a read-only array as a legacy capsule (FLAG-03: a habit)
    "lawful_cpu_work_stream",            # current_work_stream(kDLCPU) is not NULL ("can simply return NULL")
    "lawful_consumer_only",              # its arrays have no __dlpack__: a consumer-only library
    "lawful_producer_only",              # the module has no from_dlpack: a producer-only release
    "lawful_always_copies",              # storage it cannot lend: every export a flagged copy, copy=False refused
    "lawful_deferred_frees",             # the deleter queues its frees; synchronize() (or a full queue) runs them
    "lawful_two_ext_devices",            # two ext_dev devices, (12, 0) and (12, 1): each array on its own
    "lawful_copies_keep_memory",         # a copy of a fresh array keeps 96 bytes for good, asarray's as an export's
})


class Queue:
    """A stream object of fakearray's ext_dev device (as a SYCL queue is dpnp's): work on it runs
    in order, at once."""
    _fakearray_queue = True

    def __init__(self, device):
        self.device = tuple(device)

    def __repr__(self):
        return f"fakearray.Queue({self.device})"


class _NoDlpack:
    """lawful_consumer_only: an array of a library that imports DLPack but never exports it."""
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner

_DTYPES = {(0, 8), (0, 16), (0, 32), (0, 64), (1, 8), (1, 16), (1, 32), (1, 64),
           (2, 16), (2, 32), (2, 64), (6, 8), (5, 64), (5, 128), (4, 16)}


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """The array API's asarray as far as the leak loop asks it (the namespace of the
    lawful_copies_keep_memory and copy_export_leaks variants' arrays): copy=True copies."""
    if dtype is not None or device is not None:
        raise NotImplementedError("fakearray.asarray takes copy= only")
    return _fakearray.copy(obj) if copy else obj


_LOADED = None  # the bugs of the variant this process has loaded


class Adapter:
    module_name = "fakearray"

    def __init__(self, bugs=()):
        unknown = set(bugs) - KNOWN_BUGS - LAWFUL
        if unknown:
            raise ValueError(f"unknown fakearray bugs: {sorted(unknown)}")
        # The planted bug is process-global (_fakearray.cpp): a second variant loaded into the
        # same worker would change the first one's behaviour under it. Refused, loudly.
        global _LOADED
        if _LOADED is not None and _LOADED != frozenset(bugs):
            raise RuntimeError(f"fakearray variant {sorted(bugs)} cannot share a process with variant "
                               f"{sorted(_LOADED)}: the planted bug is process-global")
        _LOADED = frozenset(bugs)
        _fakearray.set_bugs(sorted(bugs))
        self.consumer_only = "lawful_consumer_only" in bugs
        self.producer_only = "lawful_producer_only" in bugs
        self.two_ext = bool({"lawful_two_ext_devices", "second_device_exported_as_first",
                             "import_lands_on_first_device"} & set(bugs))
        self.name = "fakearray" + ("[" + ",".join(sorted(bugs)) + "]" if bugs else "")
        self.version = "1.3.0"

    def dtypes(self):
        return {k: k for k in _DTYPES}

    def devices(self):
        # (12, 0): kDLExtDev, a heap fakearray keeps apart from the CPU's (host memory behind
        # the label): exporting it to the CPU (dl_device) takes a copy. (12, 1): a second such
        # heap, in the variants about a second device of one type.
        return [(1, 0), (12, 0), (12, 1)] if self.two_ext else [(1, 0), (12, 0)]

    def make(self, shape, dtype_key, device=(1, 0), layout="contiguous", read_only=False, values="plain"):
        from validator import pattern_bytes
        if tuple(device) not in self.devices():
            raise NotImplementedError(f"fakearray allocates on {self.devices()} only")
        if tuple(dtype_key) not in _DTYPES:
            raise NotImplementedError(f"fakearray has no dtype {tuple(dtype_key)}")
        shape = [int(s) for s in shape]
        data = pattern_bytes(dtype_key, math.prod(shape), values)
        made = _fakearray.make(shape, dtype_key[0], dtype_key[1], layout, read_only, data, int(device[0]),
                               int(device[1]))
        return _NoDlpack(made) if self.consumer_only else made

    def from_dlpack(self, obj, **kwargs):
        if self.producer_only:  # as Paddle 2.6 and MLX before 0.32: the function is not there
            return _fakearray.from_dlpack_not_in_this_release(obj, **kwargs)
        return _fakearray.from_dlpack(obj, **kwargs)

    def current_stream(self, device):
        return _fakearray.current_stream(int(device[0]))

    def synchronize(self):
        _fakearray.synchronize()

    def make_stream(self, device):
        if tuple(device)[0] != 12:
            raise NotImplementedError("fakearray has stream objects on ext_dev only")
        return Queue(device)

    def pending(self, shape, dtype_key, device):
        from validator import pattern_bytes
        return _fakearray.make_pending([int(s) for s in shape], dtype_key[0], dtype_key[1],
                                       pattern_bytes(dtype_key, math.prod(shape)))

    def read_on_stream(self, address, nbytes, stream):
        import ctypes
        return ctypes.string_at(address, nbytes)  # ext_dev memory is host memory behind the label

    def to_bytes(self, array):
        return getattr(array, "inner", array).to_bytes()

    def is_writable(self, array):
        return getattr(array, "inner", array).writable

    def unexportable(self):
        return [("a big-endian float32 array", _fakearray.make_big_endian(4), "DTYPE-04")]
