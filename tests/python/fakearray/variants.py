"""One adapter per planted bug, made on first use (``fakearray.variants:NAME``);
``correct`` has none."""
from . import KNOWN_BUGS, Adapter


def __getattr__(name):
    if name == "correct":
        return Adapter()
    if name in KNOWN_BUGS:
        return Adapter(bugs=[name])
    raise AttributeError(name)
