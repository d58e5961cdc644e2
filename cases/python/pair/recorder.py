"""The stand-in a pair case hands a consumer in place of a producer's array (python.pair.device.*).

Not a module of the validator package: device.cpp, beside this file, holds its text (built in
as a string) and runs it once per worker into a module of its own, so that the case depends on
no front end.

``Recorded(x)`` answers ``__dlpack__`` and ``__dlpack_device__`` by asking ``x``, and keeps a
record of each call: its keywords, what it raised, or, for a capsule, its name and the device
and flags of the tensor inside (read when the capsule is handed over, before the consumer owns
it). The pair cases read the record to tell whose behaviour an outcome is: a consumer's result
depends on what the producer served it.
"""
# capsule_facts(cap) -> (name, (device_type, device_id), flags or None, elements or None) of an
# unconsumed DLPack capsule (None for anything else): put in this module's namespace by the case
# that runs it (device.cpp), which reads the capsule with the harness's own tensor reader.


# A capsule whose tensor names device type 0, 5, 6, a negative one or one past 255 holds no tensor
# (a struct of another kind under the name, garbage: a DLPack after 1.3 may define types past
# 18, but not hundreds) and is not handed on: a consumer reading it would follow garbage pointers.
_DEVICE_TYPES = set(range(1, 256)) - {5, 6}
_withheld = []  # such capsules, kept alive: their destructor would read the same garbage


class Recorded:
    """A producer's array as a consumer sees it through the protocol, every call recorded in
    ``calls``: (method, keywords, outcome), where outcome is ``("raised", "Type: text")``,
    ``("capsule", name, device, flags, elements)``, or ``("withheld", name, device, flags, None)``
    for a capsule whose device type DLPack does not define (raised to the consumer as BufferError), ``("returned", repr)``."""

    def __init__(self, inner):
        self._inner = inner
        self.calls = []

    def __dlpack_device__(self):
        try:
            d = self._inner.__dlpack_device__()
        except BaseException as e:
            self.calls.append(("__dlpack_device__", {}, ("raised", f"{type(e).__name__}: {e}")))
            raise
        self.calls.append(("__dlpack_device__", {}, ("returned", repr(tuple(int(v) for v in d)))))
        return d

    def __dlpack__(self, *args, **kwargs):
        kw = dict(kwargs)
        if args:
            kw["positional"] = args
        try:
            cap = self._inner.__dlpack__(*args, **kwargs)
        except BaseException as e:
            self.calls.append(("__dlpack__", kw, ("raised", f"{type(e).__name__}: {e}")))
            raise
        facts = capsule_facts(cap)
        if facts and facts[1][0] not in _DEVICE_TYPES:
            _withheld.append(cap)
            self.calls.append(("__dlpack__", kw, ("withheld",) + facts[:3] + (None,)))
            raise BufferError(f"dlpack-validate's recorder: the producer's capsule names device type {facts[1][0]}, "
                              "which DLPack does not define: not handed on")
        self.calls.append(("__dlpack__", kw, ("capsule",) + facts if facts else ("returned", repr(cap)[:80])))
        return cap
