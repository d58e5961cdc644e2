#!/usr/bin/env python3
"""NumPy 2.0: np.from_dlpack calls the producer's __dlpack__ without max_version, so it is only
ever handed a legacy capsule; from NumPy 2.1 its first call offers max_version.

VER-10 (SHOULD): a consumer's first __dlpack__ call offers max_version, and retries without it
on TypeError (the Array API standard's from_dlpack pseudo-code).
Usage: python3 numpy_from_dlpack_max_version.py  (with the release's interpreter)
Exit 0: no max_version in the first call; 1: max_version is offered."""
import numpy as np

from _dl import Producer, verdict

p = Producer(np.arange(3, dtype=np.float32))  # a legacy capsule, whatever it is asked
y = np.from_dlpack(p)
verdict(bool(p.kwargs_seen) and "max_version" not in p.kwargs_seen[0],
        f"numpy {np.__version__}: np.from_dlpack called __dlpack__ with keywords "
        f"{[sorted(k) for k in p.kwargs_seen]}; values {y.tolist()}")
