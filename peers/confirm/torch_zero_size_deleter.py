"""torch 2.0 to 2.2: a zero-size legacy tensor with NULL data, imported with torch.from_dlpack and
released, never has its deleter called: the producer's memory leaks (DEL-02, a MUST: the
consumer calls the deleter once it no longer needs the tensor). torch 2.3 calls it once.
Torch 1.13 (Debian's) behaves as 2.0 to 2.2, whatever the strides of the empty tensor say.
Cases: consumer.zero_size.null_data.legacy (strides 3,1); with STRIDES "0,0"
zero_strides.null_data.legacy, with "0,3" shape_strides.null_data.legacy.
Usage: python3 torch_zero_size_deleter.py [STRIDES]"""
import ctypes
import gc
import sys

import numpy as np
import torch

from _dl import Producer, verdict

# compact (3, 1) unless told (NumPy gives an empty array the strides (0, 0), not its compact ones)
strides = [int(v) for v in sys.argv[1].split(",")] if len(sys.argv) > 1 else [3, 1]
p = Producer(np.zeros((0, 3), dtype=np.float32), strides=strides)
p._m.dl_tensor.data = None  # a zero-size tensor may have NULL data (LAYOUT-10 allows it)
t = torch.from_dlpack(p)
assert tuple(t.shape) == (0, 3), f"imported as {tuple(t.shape)}"
del t
gc.collect()
ctypes.pythonapi.PyErr_CheckSignals()
verdict(p.deleter_calls == 0, f"torch {torch.__version__}: a (0, 3) float32 tensor with NULL data and strides "
                              f"{tuple(p._strides)}, imported "
                              f"and released: the deleter ran {p.deleter_calls} time(s)")
