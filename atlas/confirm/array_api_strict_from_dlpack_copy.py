#!/usr/bin/env python3
"""array-api-strict 2.0 to 2.5: from_dlpack(x, copy=True) refuses: ValueError in 2.0 (by default),
NotImplementedError ("The copy argument to from_dlpack is not yet implemented") in 2.1 to 2.5.

KW-07 (MUST): from_dlpack(x, copy=True) of a CPU array returns a copy. The Array API standard
(2023.12), from_dlpack's copy: "If True, the function must always copy".
Exit 0: the behaviour shows (the refusal: NotImplementedError or ValueError); 1: from_dlpack(copy=True)
works (or fails otherwise); 2: this release's from_dlpack takes no copy keyword (before 2.0).
(An earlier version counted only NotImplementedError and so exited 1 on 2.0.1.)"""
import sys

import array_api_strict as xp

x = xp.asarray([1.0, 2.0, 3.0])
try:
    y = xp.from_dlpack(x, copy=True)
    raised = None
except TypeError as e:
    print(f"array_api_strict {xp.__version__}: from_dlpack takes no copy keyword ({e})")
    sys.exit(2)
except Exception as e:  # noqa: BLE001
    raised = e
if raised is None:
    print(f"array_api_strict {xp.__version__}: from_dlpack(x, copy=True) returned {y!r}")
else:
    print(f"array_api_strict {xp.__version__}: from_dlpack(x, copy=True) raised {type(raised).__name__}: {raised}")
sys.exit(0 if isinstance(raised, (NotImplementedError, ValueError)) else 1)
