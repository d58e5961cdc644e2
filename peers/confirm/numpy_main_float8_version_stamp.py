#!/usr/bin/env python3
"""NumPy main (2.6.0.dev0, 2026-08): a float8 dtype registered with np.dtypes.register_dlpack_dtype
is exported in a versioned capsule stamped DLPack 1.0, with a dtype code (kDLFloat8_e4m3fn = 10)
that DLPack defines only from 1.1.

VER-02 (SHOULD): the declared minor version covers the dtype codes used; codes 7-17 were added
in DLPack 1.1, so a consumer that trusts a 1.0 stamp cannot know them. NumPy's bundled dlpack.h
declares 1.0.
Imports NumPy and ml_dtypes (the package that provides the float8 type NumPy registers).
Usage: python3 numpy_main_float8_version_stamp.py  (with the release's interpreter)
Exit 0: a code >= 7 under a 1.0 stamp; 1: not; 2: this NumPy has no
np.dtypes.register_dlpack_dtype (before the main branch of 2026)."""
import ml_dtypes
import numpy as np

from _dl import managed, not_applicable, verdict

register = getattr(np.dtypes, "register_dlpack_dtype", None)
if register is None:
    not_applicable(f"numpy {np.__version__}: no np.dtypes.register_dlpack_dtype")
register((10, 8), np.dtype(ml_dtypes.float8_e4m3fn))  # kDLFloat8_e4m3fn, 8 bits
x = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
m = managed(x.__dlpack__(max_version=(1, 3)))
t = m.dl_tensor
verdict(t.code >= 7 and (m.major, m.minor) < (1, 1),
        f"numpy {np.__version__}: a registered float8_e4m3fn array exports dtype code {t.code} (bits {t.bits}) "
        f"in a capsule stamped {m.major}.{m.minor}")
