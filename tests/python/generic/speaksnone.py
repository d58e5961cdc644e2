"""speaksnone: a package with a from_dlpack that refuses every tensor before asking for it, as
ndonnx 0.23's does ("does not (yet) support"). Generic mode: it speaks no DLPack, which is one
finding (KW-10), never "legacy-only", never a validator error (tests/python/check_generic.py)."""
__version__ = "0.1.0"


def from_dlpack(x, /, *, device=None, copy=None):
    raise BufferError("speaksnone does not support DLPack")
