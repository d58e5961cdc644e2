#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The numpy adapter's path for ml_dtypes formats (bfloat16, fp8, ...), checked where the pinned
NumPy cannot take it for real.

NumPy exchanges those formats only once they are registered with
``np.dtypes.register_dlpack_dtype((code, bits), dtype)`` (numpy PR 31256, NumPy 2.5). The pinned
NumPy 2.4.6 has no such function, so in the real runs the adapter offers NumPy's own dtypes only
and the ml_dtypes cases skip, saying why. This script checks both branches:

1. as installed: no registration function, no ml_dtypes format offered, make() refuses one with
   a reason that names the missing API;
2. with a stand-in ``register_dlpack_dtype`` put on ``np.dtypes`` before the adapter loads:
   every ml_dtypes format is registered once under its DLPack (code, bits), with the ml_dtypes
   dtype, and offered by dtypes().

Run with the peers' venv python and PYTHONPATH=<build>/python. Exit 0 when both hold."""
import importlib
import sys

import numpy as np


def fresh_adapter():
    for name in [m for m in sys.modules if m.startswith("validator.adapters.numpy_adapter")]:
        del sys.modules[name]
    return importlib.import_module("validator.adapters.numpy_adapter")


def main():
    from validator.adapters import _numpy_layouts as L

    formats = L.ml_dtypes_names()
    if not formats:
        print("FAIL: ml_dtypes is not importable here; run with the peers' venv")
        return 1
    bad = []

    # 1. As installed.
    real = getattr(np.dtypes, "register_dlpack_dtype", None)
    if real is not None:
        print(f"note: NumPy {np.__version__} has register_dlpack_dtype; branch 1 checks the real one")
    mod = fresh_adapter()
    offered = mod.Adapter().dtypes()
    if real is None:
        extra = sorted(k for k in offered if k in formats)
        if extra:
            bad.append(f"without the API the adapter still offers {extra}")
        try:
            mod.Adapter().make((2,), (4, 16))
            bad.append("make() of bfloat16 succeeded without the API")
        except NotImplementedError as e:
            if "register_dlpack_dtype" not in str(e):
                bad.append(f"make() refused bfloat16 without naming the missing API: {e}")

    # 2. With a stand-in registration function.
    calls = []
    stand_in = lambda key, dtype: calls.append((tuple(key), np.dtype(dtype)))  # noqa: E731
    np.dtypes.register_dlpack_dtype = stand_in
    try:
        mod = fresh_adapter()
        offered = mod.Adapter().dtypes()
    finally:
        if real is None:
            del np.dtypes.register_dlpack_dtype
        else:
            np.dtypes.register_dlpack_dtype = real
    registered = {}
    for key, dtype in calls:
        if key in registered:
            bad.append(f"{key} registered twice")
        registered[key] = dtype
    import ml_dtypes
    for key, name in sorted(formats.items()):
        want = np.dtype(getattr(ml_dtypes, name))
        if registered.get(key) != want:
            bad.append(f"{key} ({name}): registered as {registered.get(key)}, expected {want}")
        if offered.get(key) != want:
            bad.append(f"{key} ({name}): offered as {offered.get(key)}, expected {want}")
    for key in registered:
        if key not in formats:
            bad.append(f"{key} registered but not an ml_dtypes format")

    for b in bad:
        print("FAIL:", b)
    if not bad:
        print(f"ok: NumPy {np.__version__}, ml_dtypes {ml_dtypes.__version__}: "
              f"{len(formats)} formats registered through the stand-in, none offered without it")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
