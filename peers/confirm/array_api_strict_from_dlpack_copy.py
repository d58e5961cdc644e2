#!/usr/bin/env python3
"""array-api-strict 2.0 to 2.5: from_dlpack(x, copy=True) refuses: ValueError in 2.0 (by default),
NotImplementedError ("The copy argument to from_dlpack is not yet implemented") in 2.1 to 2.5.

KW-07 (MUST): from_dlpack(x, copy=True) of a CPU array returns a copy. The Array API standard
(2023.12), from_dlpack's copy: "If True, the function must always copy".
Usage: python3 array_api_strict_from_dlpack_copy.py  (with the release's interpreter)
Exit 0: the refusal shows (NotImplementedError or ValueError); 1: from_dlpack(copy=True) works
(or fails otherwise); 2: this release's from_dlpack takes no copy keyword (before 2.0).
(An earlier version counted only NotImplementedError and so exited 1 on 2.0.1.)"""
import array_api_strict as xp

from _dl import not_applicable, verdict

who = f"array_api_strict {xp.__version__}"
x = xp.asarray([1.0, 2.0, 3.0])
try:
    y = xp.from_dlpack(x, copy=True)
    raised = None
except TypeError as e:
    not_applicable(f"{who}: from_dlpack takes no copy keyword ({e})")
except Exception as e:  # noqa: BLE001  (the type is the finding)
    raised = e
verdict(isinstance(raised, (NotImplementedError, ValueError)),
        f"{who}: from_dlpack(x, copy=True) returned {y!r}" if raised is None else
        f"{who}: from_dlpack(x, copy=True) raised {type(raised).__name__}: {raised}")
