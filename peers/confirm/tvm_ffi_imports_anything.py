"""tvm_ffi: from_dlpack keeps tensors other consumers refuse: float4_e2m1fn with bits 8 and
float6 with bits 8 (DTYPE-06, a MUST: "stops importing an FP6/FP4 tensor whose bits is not
6/4"), dtype code 200, 24-bit floats, 4 lanes, opaque handles, kDLVulkan and kDLCUDA labels on a
CPU build, and the newest device types kDLTPU (19) and kDLAscend (21) (DTYPE-08/09, DEV-04: SHOULDs). Cases: consumer.refuse.*.legacy,
python.consumer.error.rejection_type, python.consumer.device.foreign."""
import numpy as np
import tvm_ffi

from _dl import Producer, confirmed

a = np.arange(12, dtype=np.uint8)
kept = []
for what, kw in [("float4 bits 8", {"dtype": (17, 8)}), ("float6 bits 8", {"dtype": (15, 8)}),
                 ("code 200", {"dtype": (200, 8)}), ("opaque handle", {"dtype": (3, 8)}),
                 ("kDLVulkan", {"device": (7, 0)}), ("kDLCUDA", {"device": (2, 0)}),
                 ("kDLTPU", {"device": (19, 0)}), ("kDLAscend", {"device": (21, 0)})]:
    t = tvm_ffi.from_dlpack(Producer(a, **kw))  # a refusal would raise
    kept.append(f"{what} -> a tvm_ffi.Tensor of shape {tuple(t.shape)}")
    # Released here: a kDLAscend-labelled tensor still alive when the interpreter finalizes made
    # it die with SIGSEGV in TVMFFIObjectDecRef (2 runs of 3), after the verdict was printed.
    del t
confirmed("tvm_ffi imports: " + "; ".join(kept))
