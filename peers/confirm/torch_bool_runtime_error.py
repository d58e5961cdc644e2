"""torch (1.13, Debian's): __dlpack__() of a bool tensor raises RuntimeError ("Bool type is not
supported by dlpack"), not BufferError (ERR-01, a SHOULD: the array API's __dlpack__ raises
"BufferError: when the data cannot be exported as DLPack"). A refusal is torch's to make; its
type is the finding. Cases: producer.tensor.bool.*, producer.deleter.*.bool.*,
producer.lifetime.*.bool.*, pair.bool.*, python.input.producer.bool.*.
Usage: python3 torch_bool_runtime_error.py"""
import torch

from _dl import verdict

x = torch.ones(3, 4, dtype=torch.bool)
try:
    x.__dlpack__()
except BufferError as e:
    verdict(False, f"torch {torch.__version__}: BufferError: {e}")
except Exception as e:  # noqa: BLE001 - the exception's type is what is confirmed
    verdict(True, f"torch {torch.__version__}: __dlpack__() of a bool tensor raised {type(e).__name__}: {e}")
verdict(False, f"torch {torch.__version__}: the bool tensor was exported")
