"""mxnet: mx.nd.from_dlpack ignores DLTensor.byte_offset (LAYOUT-08, a MUST: element 0 is at
data + byte_offset) and reads the bytes at data. Cases: consumer.byte_offset.legacy,
consumer.large.byte_offset.legacy, python.input.consumer.*.offset.*."""
import numpy as np
import mxnet as mx

from _dl import Producer, not_applicable, verdict

if not hasattr(mx.nd, "from_dlpack"):
    not_applicable(f"mxnet {mx.__version__} has no mx.nd.from_dlpack")
buf = np.concatenate([np.full(16, -1.0, dtype=np.float32), np.arange(12, dtype=np.float32)])
p = Producer(buf[16:], byte_offset=64)  # data = buffer start, the elements 64 bytes further
p.array = buf  # keep the whole buffer alive
got = mx.nd.from_dlpack(p.capsule).asnumpy()
verdict(got[0] == -1.0, f"mxnet {mx.__version__}: with byte_offset 64 it reads {got[:4]} (0, 1, 2, 3 are the elements)")
