#!/usr/bin/env python3
"""NumPy 2.0: np.from_dlpack calls the producer's __dlpack__ without max_version, so it is only
ever handed a legacy capsule; from NumPy 2.1 its first call offers max_version.

VER-10 (SHOULD): a consumer's first __dlpack__ call offers max_version, and retries without it
on TypeError (the Array API standard's from_dlpack pseudo-code).
Exit 0: the behaviour shows (no max_version in the first call); 1: max_version is offered."""
import sys

import numpy as np

calls = []


class Producer:
    """A CPU array that records how it is asked for its capsule."""

    def __init__(self):
        self.inner = np.arange(3, dtype=np.float32)

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        calls.append(sorted(kwargs))
        if "max_version" in kwargs and np.lib.NumpyVersion(np.__version__) >= "2.1.0":
            return self.inner.__dlpack__(**kwargs)
        kwargs.pop("max_version", None)
        return self.inner.__dlpack__(**{k: v for k, v in kwargs.items() if k == "stream"})


y = np.from_dlpack(Producer())
print(f"numpy {np.__version__}: np.from_dlpack called __dlpack__ with keywords {calls}; values {y.tolist()}")
sys.exit(0 if calls and "max_version" not in calls[0] else 1)
