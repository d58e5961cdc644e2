"""VER-03 (a MUST): a versioned capsule stamped 0.8 is imported instead of refused; the consumer
reads dl_tensor of a struct whose layout its major (0) does not define (the validator puts
dl_tensor on a guard page, so there it is a crash in phase import).
Cases: consumer.version.major0_refused, python.consumer.version.major0.
Usage: python3 major0_accepted.py LIB"""
import sys

import numpy as np

from _dl import Producer, confirmed
from _libs import lib

_, from_dlpack = lib(sys.argv[1])
p = Producer(np.arange(4, dtype=np.float32), versioned=True, version=(0, 8))
out = from_dlpack(p)  # a refusal would raise here
confirmed(f"{sys.argv[1]}: from_dlpack imported a versioned tensor stamped 0.8: {out!r}"[:200])
