"""A tensor with a negative stride (axis 0 reversed): torch aborts the process (std::terminate,
SIGABRT); paddle imports it as an array that cannot be used (numpy() tries to allocate 2^64
bytes). LAYOUT-11 (SHOULD: import correctly or refuse with BufferError, never crash).
Cases: consumer.layout.float32.reversed.*, pair.float16.reversed.* (numpy/tvm_ffi -> torch).
Usage: python3 negative_stride_import.py torch|paddle"""
import sys

from _dl import confirmed, dies_with_signal

name = sys.argv[1]
code = f"""
import sys; sys.path.insert(0, {repr(sys.path[0])})
import numpy as np
from _dl import Producer
from _libs import lib
base = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1]
p = Producer(base, strides=[-4, 1])
_, from_dlpack = lib({name!r})
y = from_dlpack(p)
import numpy
try:
    numpy.asarray(y.numpy() if hasattr(y, 'numpy') else y)
except MemoryError as e:
    print('MemoryError', e); sys.exit(3)
print('ok')
"""
import subprocess
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
if name == "torch":
    assert r.returncode == -6, (r.returncode, r.stderr[-300:])
    confirmed("torch: importing a tensor with a negative stride kills the process with SIGABRT")
else:
    assert r.returncode == 3, (r.returncode, r.stdout[-300:], r.stderr[-300:])
    confirmed(f"{name}: the imported negative-stride tensor cannot be read: {r.stdout.strip()[:160]}")
