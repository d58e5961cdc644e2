"""paddle: from_dlpack ignores DLTensor.byte_offset (LAYOUT-08, a MUST: element 0 is at data +
byte_offset). Cases: consumer.byte_offset.legacy / .versioned."""
import numpy as np
import paddle

from _dl import Producer, confirmed

buf = np.concatenate([np.full(16, -1.0, dtype=np.float32), np.arange(12, dtype=np.float32)])
p = Producer(buf[16:], byte_offset=64)  # data = buffer start, the elements 64 bytes further
got = paddle.from_dlpack(p).numpy()
assert got[0] == -1.0, got[:4]
confirmed(f"paddle {paddle.__version__}: with byte_offset 64 it reads {got[:4]} (the bytes at data), not 0, 1, 2, 3")
