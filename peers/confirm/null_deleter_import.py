"""A tensor whose deleter is NULL (legal: dlpack.h, the deleter "can be NULL if there is no way
for the caller to provide a reasonable destructor") kills the importing process when the array
it became dies (DEL-03, a MUST: such a tensor is imported and released without calling it).
Cases: consumer.deleter.null.legacy/.versioned, python.consumer.deleter.null.
Usage: python3 null_deleter_import.py LIB [versioned]"""
import subprocess
import sys

from _dl import confirmed

name = sys.argv[1]
versioned = len(sys.argv) > 2 and sys.argv[2] == "versioned"
code = f"""
import sys; sys.path.insert(0, {repr(sys.path[0])})
import gc, numpy as np
from _dl import Producer
from _libs import lib
_, from_dlpack = lib({name!r})
p = Producer(np.arange(16, dtype=np.float32), null_deleter=True, versioned={versioned})
y = from_dlpack(p)
del y; gc.collect()
print('released')
"""
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
assert r.returncode < 0, f"exit {r.returncode}: {r.stdout[-200:]} {r.stderr[-300:]}"
confirmed(f"{name}: releasing the import of a {'versioned' if versioned else 'legacy'} tensor whose deleter is NULL "
          f"kills the process (signal {-r.returncode})")
