"""torch: the C exchange API's managed_tensor_from_py_object_no_sync refuses a sparse tensor
with RuntimeError, not BufferError (XAPI-10: "should be a BufferError if possible").
Case: python.xapi.from_py_object."""
import ctypes

import torch

from _dl import confirmed

ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api = ctypes.pythonapi.PyCapsule_GetPointer(torch.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
FROM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
from_py = FROM(ctypes.c_void_p.from_address(api + 24).value)  # managed_tensor_from_py_object_no_sync
out = ctypes.c_void_p()
try:
    from_py(torch.zeros(2, 2).to_sparse(), ctypes.byref(out))
except Exception as e:  # noqa: BLE001 - PYFUNCTYPE raises the exception the call set
    assert type(e).__name__ == "RuntimeError", type(e)
    confirmed(f"torch {torch.__version__}: a sparse tensor is refused with {type(e).__name__}: {str(e)[:80]}")
else:
    raise AssertionError("exported it")
