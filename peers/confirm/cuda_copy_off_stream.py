"""KW-06 (a MUST, array API `__dlpack__`, copy): a copy made for a consumer must run on the
consumer's `stream` when the producer understands it. Here the consumer's stream S (a
non-blocking stream, as the validator's own is: no implicit ordering with the legacy default
stream) is first kept busy by a long kernel, then `__dlpack__(stream=S, copy=True)` is asked
for; a copy queued on S cannot be finished before that kernel is, so finding the copy already
complete (read on a third stream while S has not reached the end of its kernel) shows it ran
elsewhere. Needs a CUDA GPU and CuPy (for the non-blocking stream).
Case: stream.producer.copy_on_stream.cuda0.   Usage: python3 cuda_copy_off_stream.py LIB"""
import sys
import time

from _dl import confirmed, managed

name = sys.argv[1]
n = 128 * 1024
if name != "torch":
    raise SystemExit(f"no recipe for {name}")
import cupy  # noqa: E402
import torch  # noqa: E402

x = torch.arange(n, dtype=torch.int32, device="cuda")
torch.cuda.synchronize()
s_cp = cupy.cuda.Stream(non_blocking=True)
busy = torch.cuda.ExternalStream(s_cp.ptr)
with torch.cuda.stream(busy):
    torch.cuda._sleep(2_000_000_000)  # about a second of GPU clock on S
    kernel_end = torch.cuda.Event()
    kernel_end.record(busy)
t0 = time.perf_counter()
cap = x.__dlpack__(stream=busy.cuda_stream, copy=True, max_version=(1, 3))
t1 = time.perf_counter()
m = managed(cap)
assert m.dl_tensor.data != x.data_ptr(), "no copy was made"
y = torch.from_dlpack(cap)  # a view of the copy (no further copy)
other = torch.cuda.Stream()
with torch.cuda.stream(other):
    done = bool(torch.equal(y, x))
t2 = time.perf_counter()
reached = kernel_end.query()
torch.cuda.synchronize()
print(f"__dlpack__ took {1e3 * (t1 - t0):.1f} ms, the read {1e3 * (t2 - t1):.1f} ms; S past its kernel at the read: "
      f"{reached}; copy complete: {done}")
assert not reached, "S had finished its kernel before the copy was read: inconclusive"
assert done, "the copy was not complete while S was busy: it waits behind S's work (KW-06 holds)"
confirmed(f"torch {torch.__version__}: __dlpack__(stream=S, copy=True) while S runs a 1 s kernel gives a copy that "
          f"is already complete when read on another stream: the copy did not run on S")
