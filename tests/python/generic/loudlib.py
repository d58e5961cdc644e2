"""loudlib: a package whose error messages are hostile to whoever reads the verdict: ANSI escapes
that recolour, retitle and clear the terminal, a one-byte CSI, a bidirectional override, a NUL,
and 5 MB of text. from_dlpack raises ValueError with such a message whenever it is asked for a
copy; otherwise it imports and exports as NumPy does. Every report must show the text escaped
and capped (tests/python/check_generic.py)."""
import numpy as np

from _wrapped import Array

__version__ = "0.1.0"

HOSTILE = ("\x1b[31mRED\x1b[0m \x1b]0;owned-title\x07 \x1b[2J\x1b[H \u009b31m \u202eevil\u202c nul:\x00 end "
           + "x" * 5_000_000)


def from_dlpack(x, /, *, device=None, copy=None):
    if copy is not None:
        raise ValueError(HOSTILE)
    return Array(np.from_dlpack(x))
