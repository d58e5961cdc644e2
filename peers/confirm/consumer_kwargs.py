"""VER-10 / KW-08 (SHOULDs): the keywords from_dlpack passes to __dlpack__ (a legacy-only
consumer offers no max_version; copy=True is not forwarded).
Cases: python.consumer.legacy_fallback, python.consumer.kw.forwards_copy.
Usage: python3 consumer_kwargs.py LIB EXPECTED_KEYS (comma separated, '-' for none)"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

name, expected = sys.argv[1], sys.argv[2]
_, from_dlpack = lib(name)
p = Producer(np.arange(4, dtype=np.float32))
try:
    from_dlpack(p, copy=True)
except TypeError:
    from_dlpack(p)
keys = sorted(p.kwargs_seen[0]) if p.kwargs_seen else []
assert ",".join(keys) == ("" if expected == "-" else expected), keys
confirmed(f"{name}: from_dlpack(x, copy=True) calls __dlpack__ with {p.kwargs_seen[0] if p.kwargs_seen else 'nothing'}")
