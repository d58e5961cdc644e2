"""mindspore: mindspore.utils.dlpack.from_dlpack dies (SIGSEGV) importing a legacy tensor whose
strides are NULL, which the header allows for a compact row-major tensor (LAYOUT-03, a MUST: a
consumer reads NULL strides on a legacy tensor as compact row-major). Provoked in a child.
Case: consumer.null_strides.legacy."""
import mindspore as ms

from _dl import dies_with_signal, not_applicable, verdict

if not hasattr(getattr(ms, "utils", None), "dlpack"):
    not_applicable(f"mindspore {ms.__version__} has no mindspore.utils.dlpack")
code = """
import numpy as np, mindspore as ms
from mindspore.utils import dlpack
from _dl import Producer
ms.set_device("CPU") if hasattr(ms, "set_device") else ms.set_context(device_target="CPU")
p = Producer(np.arange(6, dtype=np.float32).reshape(2, 3))
p._m.dl_tensor.strides = None  # NULL: compact row-major
y = dlpack.from_dlpack(p.capsule)
print(y.asnumpy().ravel().tolist())
"""
control = code.replace("p._m.dl_tensor.strides = None", "")
assert dies_with_signal(control) == 0, "the same import with strides (1, 3) crashes too"
sig = dies_with_signal(code)
verdict(sig != 0, f"mindspore {ms.__version__}: importing a legacy 2x3 float32 tensor with NULL strides "
                  f"{'kills the process with signal %d' % sig if sig else 'works'}")
