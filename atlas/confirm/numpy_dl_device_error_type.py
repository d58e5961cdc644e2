#!/usr/bin/env python3
"""NumPy 2.1 to 2.3: __dlpack__(dl_device=...) naming a device NumPy cannot serve raises
ValueError; NumPy 2.4 raises BufferError.

DEV-06 (MUST): a dl_device the producer cannot serve is refused with BufferError. The Array API
standard, __dlpack__'s dl_device: "If the producer cannot ... export to the requested device,
it must raise BufferError" (2023.12).
Exit 0: the behaviour shows (ValueError); 1: it does not (BufferError); 2: this NumPy takes no
dl_device keyword (before 2.1)."""
import sys

import numpy as np

x = np.arange(4, dtype=np.float32)
try:
    x.__dlpack__(dl_device=(7, 0))  # kDLVulkan: no CPU array can be served there
    raised = None
except TypeError as e:
    print(f"numpy {np.__version__}: __dlpack__ takes no dl_device keyword ({e})")
    sys.exit(2)
except Exception as e:  # noqa: BLE001
    raised = e
print(f"numpy {np.__version__}: __dlpack__(dl_device=(7, 0)) raised {type(raised).__name__ if raised else 'nothing'}: {raised}")
sys.exit(0 if isinstance(raised, ValueError) and not isinstance(raised, BufferError) else 1)
