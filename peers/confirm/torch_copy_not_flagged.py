"""torch: __dlpack__(max_version=(1, 3), copy=True) copies but does not set IS_COPIED (FLAG-05,
a MUST: "When a copy happens, the DLPACK_FLAG_BITMASK_IS_COPIED flag must be set").
Cases: producer.flags.is_copied.*, python.kw.copy_true, python.input.producer.*.copy."""
import torch

from _dl import IS_COPIED, confirmed, managed

x = torch.arange(12, dtype=torch.float32)
m = managed(x.__dlpack__(max_version=(1, 3), copy=True))
assert m.dl_tensor.data != x.data_ptr(), "no copy was made"
assert not m.flags & IS_COPIED, "IS_COPIED is set now"
confirmed(f"torch {torch.__version__}: copy=True gives a copy at {m.dl_tensor.data:#x} (source {x.data_ptr():#x}) "
          f"with flags {m.flags:#x}")
