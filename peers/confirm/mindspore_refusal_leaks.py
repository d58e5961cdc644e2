"""mindspore: mindspore.utils.dlpack.from_dlpack renames the capsule to 'used_dltensor' (taking
ownership) before it checks the tensor, then refuses it (RuntimeError) without calling the
deleter: the tensor is never released (DEL-08, a MUST: from the rename on, calling the deleter
on an error path is the consumer's duty). KIND is the tensor it refuses: complex64 (the
default; a dtype it does not import), code200 (a dtype code DLPack does not define), bool,
offset (a float32 tensor with byte_offset 64) or cuda (a float32 tensor labelled kDLCUDA).
Cases: python.input.consumer.*, python.consumer.device.*, python.consumer.error.rejection_type.
Usage: python3 mindspore_refusal_leaks.py [KIND]"""
import gc

import numpy as np
import mindspore as ms

from _dl import Producer, capsule_name, not_applicable, verdict

if not hasattr(getattr(ms, "utils", None), "dlpack"):
    not_applicable(f"mindspore {ms.__version__} has no mindspore.utils.dlpack")
from mindspore.utils import dlpack  # noqa: E402

ms.set_device("CPU") if hasattr(ms, "set_device") else ms.set_context(device_target="CPU")
import sys  # noqa: E402

kind = sys.argv[1] if len(sys.argv) > 1 else "complex64"
if kind == "complex64":
    p = Producer(np.zeros(4, dtype=np.complex64))
elif kind == "code200":
    p = Producer(np.zeros(4, dtype=np.float32), dtype=(200, 32))
elif kind == "bool":
    p = Producer(np.zeros(4, dtype=np.bool_))
elif kind == "offset":
    buf = np.zeros(20, dtype=np.float32)
    p = Producer(buf[16:], byte_offset=64)
    p.array = buf  # the whole buffer stays alive
elif kind == "cuda":
    p = Producer(np.zeros(4, dtype=np.float32), device=(2, 0))
else:
    sys.exit(f"unknown KIND {kind!r}: complex64, code200, bool, offset or cuda")
try:
    dlpack.from_dlpack(p.capsule)
except Exception as e:  # noqa: BLE001
    err = ": ".join([type(e).__name__] + str(e).splitlines()[:1])
else:
    not_applicable(f"mindspore {ms.__version__} imports the {kind} tensor: no refusal to watch")
gc.collect()
name = capsule_name(p.capsule)
verdict(name == "used_dltensor" and p.deleter_calls == 0,
        f"mindspore {ms.__version__}: {'an' if kind[0] in 'aeiou' else 'a'} {kind} tensor refused ({err}); capsule now named {name!r}, deleter called "
        f"{p.deleter_calls} time(s)")
