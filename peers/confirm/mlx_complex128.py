"""mlx: from_dlpack of a complex128 tensor returns a complex64 array (the element type changes
silently; DTYPE-08: refuse rather than misinterpret). Case: consumer.roundtrip.complex128.legacy."""
import mlx.core as mx
import numpy as np

from _dl import confirmed

a = mx.from_dlpack(np.arange(4, dtype=np.complex128))
assert a.dtype == mx.complex64, a.dtype
confirmed(f"mlx {mx.__version__}: a complex128 tensor becomes {a.dtype}")
