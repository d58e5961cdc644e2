"""ERR-01 (a SHOULD): a bit-packed boolean pyarrow Array cannot be described by DLPack (kDLBool
is one byte per element), and __dlpack__ refuses it with ArrowTypeError (a TypeError), not
BufferError. Case: python.error.unexportable.
Usage: python3 pyarrow_bool_type_error.py"""
import pyarrow as pa

from _dl import confirmed

x = pa.array([True, False, True], type=pa.bool_())
try:
    x.__dlpack__()
except BufferError:
    raise SystemExit("not confirmed: BufferError was raised")
except TypeError as e:
    confirmed(f"pyarrow {pa.__version__}: __dlpack__ of a bool Array raised {type(e).__name__}: {e}")
else:
    raise SystemExit("not confirmed: the bool Array was exported")
