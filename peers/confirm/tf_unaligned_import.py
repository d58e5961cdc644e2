"""tensorflow: tf.experimental.dlpack.from_dlpack imports CPU data that is not 64-byte aligned
without copying it, and the first TensorFlow kernel run on the imported tensor aborts the
process (SIGABRT, "Check failed: IsAligned()"). DLPack promises no alignment a consumer may rely
on (LAYOUT-09: the header's 256-byte note is disclaimed in the same comment), so importing such
data must give a readable tensor or a clean error. The data here is a plain NumPy array, whose
buffer glibc's malloc puts 16 bytes past a 64-byte boundary; the same array 64-byte aligned is
the control. Cases: consumer.alignment.*.legacy and the pair.* cases with tensorflow as the
consumer of a producer whose data is not 64-byte aligned (NumPy, MLX, array_api_strict)."""
import sys

from _dl import confirmed, dies_with_signal

code = """
import os, sys; os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"; sys.path.insert(0, {here!r})
import numpy as np, tensorflow as tf
raw = np.zeros(256, dtype=np.uint8)
start = ({mod} - raw.ctypes.data) % 64
a = raw[start:start + 24].view(np.float32)
a[:] = np.arange(6)
t = tf.experimental.dlpack.from_dlpack(a.__dlpack__())
assert (t + t).numpy().tolist() == [0, 2, 4, 6, 8, 10]
"""
here = sys.path[0]
aligned = dies_with_signal(code.format(here=here, mod=0))
assert aligned == 0, f"control (64-byte aligned) died with signal {aligned}"
sig = dies_with_signal(code.format(here=here, mod=16))
assert sig == 6, f"expected SIGABRT on data 16 bytes past a 64-byte boundary, got signal {sig}"
confirmed("tensorflow: a NumPy float32 array 16 bytes past a 64-byte boundary imports, then t + t aborts "
          "(SIGABRT); the same array 64-byte aligned computes")

# Where the other producers of the pair cases put a 3x4 float32 tensor's data: not on a
# 64-byte boundary either (MLX's allocator; torch's offset view, one element into its buffer).
import numpy as np  # noqa: E402
import mlx.core as mx  # noqa: E402
import torch  # noqa: E402

from _dl import managed  # noqa: E402

mlx_mod = managed(mx.array(np.zeros((3, 4), np.float32)).__dlpack__()).dl_tensor.data % 64
t = torch.zeros(13)
torch_mod = managed(t[1:].reshape(3, 4).__dlpack__()).dl_tensor.data % 64
assert mlx_mod % 16 == 8 and torch_mod == 4, (mlx_mod, torch_mod)
confirmed(f"an MLX float32 array's data is {mlx_mod} bytes past a 64-byte boundary, a torch offset view's {torch_mod}")
