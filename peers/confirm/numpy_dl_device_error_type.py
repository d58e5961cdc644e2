#!/usr/bin/env python3
"""NumPy 2.1 to 2.3: __dlpack__(dl_device=...) naming a device NumPy cannot serve raises
ValueError; NumPy 2.4 raises BufferError.

DEV-06 (MUST): a dl_device the producer cannot serve is refused with BufferError. The Array API
standard, __dlpack__'s dl_device: "If the producer cannot ... export to the requested device,
it must raise BufferError" (2023.12).
Usage: python3 numpy_dl_device_error_type.py  (with the release's interpreter)
Exit 0: ValueError; 1: BufferError (or anything else); 2: this NumPy takes no dl_device keyword
(before 2.1)."""
import numpy as np

from _dl import not_applicable, verdict

x = np.arange(4, dtype=np.float32)
try:
    x.__dlpack__(dl_device=(7, 0))  # kDLVulkan: no CPU array can be served there
    raised = None
except TypeError as e:
    not_applicable(f"numpy {np.__version__}: __dlpack__ takes no dl_device keyword ({e})")
except Exception as e:  # noqa: BLE001  (the type is the finding)
    raised = e
verdict(isinstance(raised, ValueError) and not isinstance(raised, BufferError),
        f"numpy {np.__version__}: __dlpack__(dl_device=(7, 0)) raised "
        f"{type(raised).__name__ if raised else 'nothing'}: {raised}")
