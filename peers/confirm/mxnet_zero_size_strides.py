"""mxnet: mx.nd.from_dlpack refuses a tensor without elements whose data is NULL when its strides
are not the compact ones (MXNetError "Unsupported DLPack because MXNet only support compact
tensor now"), though the strides of a tensor without elements address nothing. LAYOUT-10 (a MUST
for consumers): "a consumer must take NULL data whenever some shape[i] == 0". The compact strides
(3, 1) are imported. Exit 0 when a (0, 3) float32 tensor with NULL data is refused with strides
(0, 0) or (0, 3) while (3, 1) is imported.
Cases: consumer.zero_size.zero_strides.null_data.legacy, consumer.zero_size.shape_strides.null_data.legacy.
Usage: python3 mxnet_zero_size_strides.py"""
import numpy as np
import mxnet as mx

from _dl import Producer, not_applicable, verdict

if not hasattr(mx.nd, "from_dlpack"):
    not_applicable(f"mxnet {mx.__version__} has no mx.nd.from_dlpack")


def outcome(strides):
    p = Producer(np.zeros((0, 3), dtype=np.float32), strides=strides)
    p._m.dl_tensor.data = None
    try:
        a = mx.nd.from_dlpack(p.capsule)
        return f"imported as {a.shape}"
    except Exception as e:  # the finding is which exception, if any
        return f"refused: {type(e).__name__}: {str(e).strip().splitlines()[-1][:90]}"


seen = {s: outcome(list(s)) for s in [(3, 1), (0, 0), (0, 3)]}
verdict(seen[(3, 1)].startswith("imported") and all(seen[s].startswith("refused") for s in [(0, 0), (0, 3)]),
        f"mxnet {mx.__version__}, a (0, 3) float32 tensor with NULL data: " +
        "; ".join(f"strides {s} {o}" for s, o in seen.items()))
