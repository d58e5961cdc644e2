"""paddle: the C exchange API's managed_tensor_allocator accepts a prototype of shape
(2**62 + 1, 4), whose element count overflows 64 bits (to 4), and returns 0 with a tensor of that
shape (XAPI-16, a MUST: an impossible allocation fails and calls SetError).
Case: exchange_api.allocator.error."""
import ctypes

import paddle

from _dl import DLManagedTensorVersioned, DLTensor, confirmed

ctypes.pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
ctypes.pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api = ctypes.pythonapi.PyCapsule_GetPointer(paddle.Tensor.__dlpack_c_exchange_api__, b"dlpack_exchange_api")
SETERR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                         SETERR)
alloc = ALLOC(ctypes.c_void_p.from_address(api + 16).value)  # managed_tensor_allocator at offset 16
errors = []
set_error = SETERR(lambda ctx, kind, msg: errors.append((kind, msg)))
shape = (ctypes.c_int64 * 2)((1 << 62) + 1, 4)
proto = DLTensor(None, 1, 0, 2, 2, 32, 1, shape, None, 0)
out = ctypes.c_void_p()
rc = alloc(ctypes.byref(proto), ctypes.byref(out), None, set_error)
assert rc == 0 and out.value, (rc, errors)
m = DLManagedTensorVersioned.from_address(out.value)
confirmed(f"paddle {paddle.__version__}: the allocator returned {rc} and a tensor of shape "
          f"({m.dl_tensor.shape[0]}, {m.dl_tensor.shape[1]}); SetError calls: {errors}")
