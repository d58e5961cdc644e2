"""onnxruntime: a bool OrtValue is exported with dtype (1, 8, 1), kDLUInt 8 bits, not kDLBool
(6, 8, 1) (DTYPE-11, a MUST since DLPack 0.8; the validator grades (1, 8, 1) INFO in one case and
FAIL in another). Cases: producer.tensor.bool.contiguous.legacy,
python.input.producer.bool.contiguous.scalar.loading.once.   Usage: python3 onnxruntime_bool_export.py"""
import numpy as np
import onnxruntime as ort

from _dl import managed, not_applicable, verdict

v = ort.OrtValue.ortvalue_from_numpy(np.array([True, False, True]))
if not hasattr(v, "__dlpack__"):
    v = v._ortvalue  # 1.21-1.25: only the native OrtValue exports
if not hasattr(v, "__dlpack__"):
    not_applicable(f"onnxruntime {ort.__version__} has no DLPack export")
t = managed(v.__dlpack__()).dl_tensor
verdict((t.code, t.bits, t.lanes) == (1, 8, 1),
        f"onnxruntime {ort.__version__}: a bool OrtValue exports dtype ({t.code}, {t.bits}, {t.lanes})")
