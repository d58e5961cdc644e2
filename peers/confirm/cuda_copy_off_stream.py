"""KW-06 (a MUST, array API `__dlpack__`, copy): a copy made for a consumer must run on the
consumer's `stream` when the producer understands it. Here the consumer's stream S (a
non-blocking stream, as the validator's own is: no implicit ordering with the legacy default
stream) is first kept busy by a long kernel, then `__dlpack__(stream=S, copy=True)` is asked
for. A copy queued on S cannot land before that kernel is over, so the copy is read again and
again on a third non-blocking stream (raw device-to-host copies into memory allocated before the
kernel: no library call that might allocate, and so synchronise the device, in between) until S
gets past its kernel; a read made while S was still inside it that finds the copy complete shows
the copy ran elsewhere.
An earlier version read the copy with torch.equal on another stream: that read allocates, and
on an H200 it waited out the whole kernel (1.06 s), so it could never be conclusive.
Needs a CUDA GPU and CuPy (for the streams and the raw copies).
Case: stream.producer.copy_on_stream.cuda0.   Usage: python3 cuda_copy_off_stream.py LIB"""
import sys

import numpy as np

from _dl import confirmed, managed

name = sys.argv[1]
n = 128 * 1024
if name != "torch":
    raise SystemExit(f"no recipe for {name}")
import cupy  # noqa: E402
import torch  # noqa: E402

want = np.arange(n, dtype=np.int32)
x = torch.from_numpy(want.copy()).cuda()
spare = torch.zeros(n, dtype=torch.int32, device="cuda")  # a zeroed block for the copy to reuse
del spare
s_cp = cupy.cuda.Stream(non_blocking=True)
reader = cupy.cuda.Stream(non_blocking=True)
host = np.zeros(n, dtype=np.int32)
busy = torch.cuda.ExternalStream(s_cp.ptr)
torch.cuda.synchronize()
with torch.cuda.stream(busy):
    torch.cuda._sleep(2_000_000_000)  # about a second of GPU clock on S
    kernel_end = torch.cuda.Event()
    kernel_end.record(busy)
cap = x.__dlpack__(stream=busy.cuda_stream, copy=True, max_version=(1, 3))
m = managed(cap)
data = m.dl_tensor.data + m.dl_tensor.byte_offset
assert data != x.data_ptr(), "no copy was made"
reads, complete_while_busy = 0, False
while True:
    cupy.cuda.runtime.memcpyAsync(host.ctypes.data, data, host.nbytes, cupy.cuda.runtime.memcpyDeviceToHost,
                                  reader.ptr)
    reader.synchronize()
    if kernel_end.query():  # this read may have run after the kernel: it proves nothing
        break
    reads += 1
    if np.array_equal(host, want):
        complete_while_busy = True
        break
torch.cuda.synchronize()
print(f"reads made while S was inside its kernel: {reads}; copy complete at one of them: {complete_while_busy}")
assert reads > 0, "S had finished its kernel before the first read: inconclusive"
assert complete_while_busy, "the copy was never complete while S was busy: it waits behind S's work (KW-06 holds)"
confirmed(f"torch {torch.__version__}: __dlpack__(stream=S, copy=True) while S runs a 1 s kernel gives a copy that "
          f"is complete, read on another stream, before S's kernel ends: the copy did not run on S")
