"""tvm_ffi: __dlpack__(copy=True, dl_device=(1, 0)) on a CPU array returns the array's own memory
(KW-03, a MUST: the array API's copy "If True, the function must always copy"), while
__dlpack__(max_version=(1, 3), copy=True) refuses with BufferError ("copy not yet supported").
Cases: python.request.mv_none.copy_true.dev_same.stream_none.writable.large, python.kw.copy_true,
python.request.*.copy_true.* (the refusals)."""
import numpy as np
import tvm_ffi

from _dl import capsule_name, confirmed, managed

src = np.arange(1024 * 1024, dtype=np.float32)
x = tvm_ffi.from_dlpack(src)
cap = x.__dlpack__(copy=True, dl_device=(1, 0))
name = capsule_name(cap)
data = managed(cap).dl_tensor.data
assert data == src.ctypes.data, f"a copy was made: {data:#x} vs {src.ctypes.data:#x}"
try:
    x.__dlpack__(max_version=(1, 3), copy=True)
    refused = "no"
except BufferError as e:
    refused = f"BufferError: {e}"
assert refused != "no", "copy=True with max_version is no longer refused"
confirmed(f"tvm_ffi {tvm_ffi.__version__}: copy=True, dl_device=(1, 0) -> '{name}' at the source's own "
          f"address {data:#x}; copy=True, max_version=(1, 3) -> {refused}")
