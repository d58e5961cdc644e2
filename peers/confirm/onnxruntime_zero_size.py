"""onnxruntime: refuses tensors without elements whose strides are not the compact ones ("ORT
only supports contiguous tensor"): strides (0, 0), as NumPy 2 and Warp give a (0, 3) array,
though the strides of a tensor without elements address nothing. LAYOUT-10 (a MUST for
consumers): a zero-size tensor is imported. Tries (0, 3) float32 tensors with strides (0, 0) and
(3, 1), data NULL and not, through from_dlpack, and the export of a (0, 3) OrtValue.
Cases: consumer.roundtrip.empty.legacy, producer.shape.empty.legacy.
Usage: python3 onnxruntime_zero_size.py"""
import numpy as np
import onnxruntime as ort
from onnxruntime.capi import _pybind_state as C

from _dl import Producer, not_applicable, verdict

if not hasattr(C.OrtValue, "from_dlpack"):
    not_applicable(f"onnxruntime {ort.__version__} has no DLPack")
public = hasattr(ort.OrtValue, "from_dlpack")


def import_(p):
    return ort.OrtValue.from_dlpack(p) if public else C.OrtValue.from_dlpack(p.capsule, False)


refused = []
for label, null, strides in (("data NULL, strides (0, 0)", True, [0, 0]), ("strides (0, 0)", False, [0, 0]),
                             ("data NULL, strides (3, 1)", True, [3, 1]), ("strides (3, 1)", False, [3, 1])):
    p = Producer(np.zeros((0, 3), dtype=np.float32), strides=strides)
    if null:
        p._m.dl_tensor.data = None
    try:
        y = import_(p)
        assert list(y.shape()) == [0, 3], y.shape()
    except Exception as e:  # noqa: BLE001
        refused.append(f"import with {label}: {type(e).__name__}: {str(e)[-90:].strip()}")
v = ort.OrtValue.ortvalue_from_numpy(np.zeros((0, 3), dtype=np.float32))
try:
    (v if hasattr(v, "__dlpack__") else v._ortvalue).__dlpack__()
except Exception as e:  # noqa: BLE001
    refused.append(f"export: {type(e).__name__}: {str(e)[:80]}")
verdict(bool(refused), f"onnxruntime {ort.__version__}: " + ("; ".join(refused) or
                       "(0, 3) tensors are imported (strides (0, 0) or (3, 1), data NULL or not) and exported"))
