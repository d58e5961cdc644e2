"""VER-03 (a MUST): mlx's from_dlpack never asks for max_version, yet it imports a
'dltensor_versioned' capsule handed to it, and does so whatever the version stamp says (2.0 or
0.8): it reads a tensor whose major it does not know instead of refusing.
Cases: python.consumer.version.* and consumer.version.major*_refused, now run on mlx because the
load check saw it parse versioned capsules.
Usage: python3 mlx_versioned_any_major.py"""
import mlx.core as mx
import numpy as np

from _dl import Producer, confirmed

for version in ((2, 0), (0, 8)):
    p = Producer(np.arange(4, dtype=np.float32), versioned=True, version=version)
    out = mx.from_dlpack(p)  # a refusal would raise here
    assert "max_version" not in p.kwargs_seen[0], p.kwargs_seen
    confirmed(f"mlx {mx.__version__}: imported a versioned tensor stamped {version} "
              f"(asked with {p.kwargs_seen[0]}): {out!r}"[:200])
