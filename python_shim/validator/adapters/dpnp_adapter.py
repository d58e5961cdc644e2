"""Built-in adapter for dpnp (data-parallel NumPy on SYCL, with dpctl): its arrays live on a
SYCL device, kDLOneAPI (14) device 0 for DLPack. On a machine with no GPU the device is the
CPU itself through Intel's OpenCL CPU runtime (scripts/oneapi.sh sets it up). Without any SYCL
device the adapter declares no device and says why: every case is then a skip quoting it.

Arrays are made on the device in the layout asked (dpnp has strides, Fortran order, negative
and zero strides) from the reference pattern built with NumPy; they are read back through the
library's own host copy (dpnp.asnumpy), never through DLPack."""
import dpctl
import dpnp
import numpy as np

from . import _numpy_layouts as L

_ONEAPI = 14


def _why_unavailable():
    try:
        devices = dpctl.get_devices()
    except Exception as e:  # noqa: BLE001 - SyclDeviceCreationError and friends
        return f"dpctl {dpctl.__version__} found no SYCL runtime: {type(e).__name__}: {e}"
    if not devices:
        return ("no SYCL device: dpctl.get_devices() is empty (on a machine without a GPU the device is "
                "the CPU through Intel's OpenCL runtime: bash scripts/oneapi.sh sets it up)")
    return ""


class Adapter:
    module_name = "dpnp"

    def __init__(self):
        self.name = "dpnp"
        self.version = dpnp.__version__
        self.unavailable = _why_unavailable()
        self._queue = None if self.unavailable else dpctl.SyclQueue()

    def dtypes(self):
        out = {k: np.dtype(v) for k, v in L._BASE.items()}
        if self._queue is not None and not self._queue.sycl_device.has_aspect_fp64:
            out = {k: v for k, v in out.items() if k not in ((2, 64), (5, 128))}
        return out

    def devices(self):
        return [] if self.unavailable else [(_ONEAPI, 0)]

    def make(self, shape, dtype_key, device=(_ONEAPI, 0), layout="contiguous", read_only=False, values="plain"):
        if tuple(device) != (_ONEAPI, 0):
            raise NotImplementedError(f"the dpnp adapter allocates on kDLOneAPI device 0 only, not {tuple(device)}")
        key = tuple(dtype_key)
        if key not in self.dtypes():
            raise NotImplementedError(f"dpnp has no dtype for DLPack (code, bits) {key} on this device")
        shape = tuple(int(s) for s in shape)
        host = L.logical(key, shape, values)
        q = self._queue
        if layout == "contiguous":
            a = dpnp.asarray(host, sycl_queue=q)
        elif not shape:
            raise NotImplementedError(f"layout {layout} needs ndim >= 1")
        elif layout == "fortran":
            a = dpnp.asarray(host, order="F", sycl_queue=q)
        elif layout == "strided":
            big = dpnp.empty(shape[:-1] + (2 * shape[-1],), dtype=host.dtype, sycl_queue=q)
            a = big[..., ::2]
            a[...] = dpnp.asarray(host, sycl_queue=q)
        elif layout == "offset":
            buf = dpnp.empty((host.size + 1,), dtype=host.dtype, sycl_queue=q)
            buf[1:] = dpnp.asarray(host.ravel(), sycl_queue=q)
            a = buf[1:].reshape(shape)
        elif layout == "reversed":
            a = dpnp.asarray(np.ascontiguousarray(host[::-1]), sycl_queue=q)[::-1]
        elif layout == "broadcast":
            a = dpnp.broadcast_to(dpnp.asarray(L.logical(key, shape[1:], values), sycl_queue=q), shape)
        else:
            raise NotImplementedError(f"unknown layout {layout!r}")
        if read_only:
            a.flags.writable = False
        # The fills above are kernels queued on the device: the array handed out holds its values
        # (what the library then does with a stream-less export is for the cases to see).
        q.wait()
        return a

    def synchronize(self):
        # The queue's finished tasks are freed on the SYCL runtime's threads; a heap reading
        # (the deleter cases) waits for them here first.
        if self._queue is not None:
            self._queue.wait()

    # Streams on kDLOneAPI are SYCL queues (dpnp's __dlpack__(stream=...) takes a dpctl.SyclQueue
    # and orders its export after the array's work on it): python.stream.queue_ordered. The
    # consumer's queue is in order, as the array API's __dlpack__ text suggests for SYCL ("an
    # object containing an in-order sycl::queue"): on an out-of-order queue the SYCL runtime
    # here lets a later copy start before the queue's barrier ends, so a read on it can see stale
    # elements whatever the producer did (peers/confirm/dpnp_queue_order.py).
    def make_stream(self, device):
        if tuple(device) != (_ONEAPI, 0) or self._queue is None:
            raise NotImplementedError(f"the dpnp adapter makes queues on kDLOneAPI device 0 only, not {tuple(device)}")
        return dpctl.SyclQueue(self._queue.sycl_context, self._queue.sycl_device, property="in_order")

    def pending(self, shape, dtype_key, device):
        """An array whose last writes (the pattern) are still queued: a copy kernel not waited for."""
        if tuple(device) != (_ONEAPI, 0):
            raise NotImplementedError(f"the dpnp adapter allocates on kDLOneAPI device 0 only, not {tuple(device)}")
        shape = tuple(int(s) for s in shape)
        src = dpnp.asarray(L.logical(tuple(dtype_key), shape), sycl_queue=self._queue)
        self._queue.wait()
        a = dpnp.zeros(shape, dtype=src.dtype, sycl_queue=self._queue)
        self._queue.wait()
        a[...] = src  # queued on the array's queue, not waited for
        return a

    def read_on_stream(self, address, nbytes, stream):
        """The bytes at a USM address, copied to the host by a command on `stream` (a SyclQueue)."""
        import dpctl.memory as dpm

        class _Usm:
            __sycl_usm_array_interface__ = {"data": (int(address), True), "shape": (int(nbytes),),
                                            "typestr": "|u1", "version": 1, "syclobj": stream}
        host = np.empty(int(nbytes), dtype=np.uint8)
        stream.memcpy(host, dpm.as_usm_memory(_Usm()), int(nbytes))
        return host.tobytes()

    def from_dlpack(self, obj, **kwargs):
        return dpnp.from_dlpack(obj, **kwargs)

    def to_bytes(self, array):
        host = array if isinstance(array, np.ndarray) else dpnp.asnumpy(array)  # its own host copy
        return L.bytes_of(np.ascontiguousarray(host))

    def is_writable(self, array):
        # dpnp arrays say flags.writable; an import of host memory is a NumPy array (writeable)
        flags = array.flags
        return bool(getattr(flags, "writable", getattr(flags, "writeable", True)))

    def cpu_device(self):
        # from_dlpack(device=...): the string "cpu" is a SYCL filter selector (the SYCL CPU
        # device, still kDLOneAPI); the host is the DLPack pair (kDLCPU, 0), which dpnp takes
        # and answers with a NumPy array.
        return (1, 0)
