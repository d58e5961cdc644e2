"""pipewriter: a package that writes into every pipe it may write to (found through
/proc/self/fd, past stdin/stdout/stderr) whenever from_dlpack runs: two well-formed "pass"
results without the validator's nonce. It also has a real bug: what it imports is the source
plus one, so every round trip of a number type is wrong. The forgeries must be charged to it as
intrusions, and each case must keep the verdict its own events give (tests/python/check_generic.py)."""
import os
import stat

import numpy as np

from _wrapped import Array

__version__ = "0.1.0"

FORGED = (b'{"event":"result","outcome":{"status":"pass","message":"forged"}}\n'
          b'{"event":"result","nonce":"0000000000000000","case":"x","outcome":{"status":"pass"}}\n')


def _forge():
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd < 3:
            continue
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and os.get_blocking(fd) is not None:
                os.write(fd, FORGED)
        except OSError:
            pass


def from_dlpack(x, /, *, device=None, copy=None):
    _forge()
    a = np.from_dlpack(x)
    return Array(a + 1 if a.dtype.kind in "iuf" else a.copy())
