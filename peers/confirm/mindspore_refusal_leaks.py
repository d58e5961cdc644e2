"""mindspore: mindspore.utils.dlpack.from_dlpack renames the capsule to 'used_dltensor' (taking
ownership) before it checks the tensor, then refuses it (RuntimeError) without calling the
deleter: the tensor is never released (DEL-08, a MUST: from the rename on, calling the deleter
on an error path is the consumer's duty). Here a complex64 tensor, which it does not import.
Cases: python.input.consumer.complex64.*, python.consumer.device.*, python.consumer.error.rejection_type."""
import gc

import numpy as np
import mindspore as ms

from _dl import Producer, capsule_name, not_applicable, verdict

if not hasattr(getattr(ms, "utils", None), "dlpack"):
    not_applicable(f"mindspore {ms.__version__} has no mindspore.utils.dlpack")
from mindspore.utils import dlpack  # noqa: E402

ms.set_device("CPU") if hasattr(ms, "set_device") else ms.set_context(device_target="CPU")
p = Producer(np.zeros(4, dtype=np.complex64))
try:
    dlpack.from_dlpack(p.capsule)
except Exception as e:  # noqa: BLE001
    err = f"{type(e).__name__}: {str(e).splitlines()[0]}"
else:
    not_applicable(f"mindspore {ms.__version__} imports complex64: no refusal to watch")
gc.collect()
name = capsule_name(p.capsule)
verdict(name == "used_dltensor" and p.deleter_calls == 0,
        f"mindspore {ms.__version__}: refused ({err}); capsule now named {name!r}, deleter called "
        f"{p.deleter_calls} time(s)")
