"""DEL-08 (a MUST): a tensor the consumer refuses is released exactly once. A consumer that calls
the deleter without first renaming the capsule to 'used_dltensor*' leaves the producer's capsule
destructor to call it again (PS: the destructor deletes a capsule still named 'dltensor*'),
so a producer that frees in its deleter is freed twice. Here the producer's capsule has no
destructor and counts deleter calls: one call with the capsule's name unchanged is the breach.
Cases: python.consumer.device.unusable.* (the device types named).
Usage: python3 refusal_deletes_unrenamed.py LIB DEVICE_TYPE [legacy]  (a versioned capsule unless
'legacy': the kind the consumer speaks)"""
import sys

import numpy as np

from _dl import Producer, capsule_name, confirmed
from _libs import lib

name, device = sys.argv[1], int(sys.argv[2])
versioned = sys.argv[3:4] != ["legacy"]
_, from_dlpack = lib(name)
p = Producer(np.arange(4, dtype=np.float32), versioned=versioned, device=(device, 0))
try:
    from_dlpack(p)
except Exception as e:  # noqa: BLE001 - any refusal
    refusal = f"{type(e).__name__}: {str(e)[:80]}"
else:
    raise AssertionError("the tensor was imported, not refused")
left = capsule_name(p.capsule)
assert p.deleter_calls == 1 and not left.startswith("used_"), f"{p.deleter_calls} call(s), capsule named {left!r}"
confirmed(f"{name}: refusing a device-type-{device} tensor ({refusal}) it called the deleter once and left the "
          f"capsule named {left!r}, so the producer's destructor releases it a second time")
