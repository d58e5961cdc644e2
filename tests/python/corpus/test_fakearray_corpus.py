"""tests/python/corpus/test_fakearray_corpus.py: the fake array library's own test of its
from_dlpack against the corpus, written as a library writes one (docs/corpus.md). FAKE_BUGS
(space-separated fakearray bug names) plants bugs for check_corpus.py's proofs."""
import os

from fakearray import _fakearray

_fakearray.set_bugs(os.environ.get("FAKE_BUGS", "").split())


# The fake library releases an imported tensor on the caller's thread as its array dies, so it
# gives no release time (settle=0): a deleter that never runs fails at once, not after half a
# second (90 cases of the planted never-called deleter slept 45 s).


def test_from_dlpack(dlpack_edge_case):
    dlpack_edge_case.check(_fakearray.from_dlpack, isolate=True, settle=0)


def test_from_dlpack_refuses(dlpack_bad_case):
    dlpack_bad_case.check(_fakearray.from_dlpack, isolate=True, settle=0)
