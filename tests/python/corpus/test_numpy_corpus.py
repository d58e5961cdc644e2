"""tests/python/corpus/test_numpy_corpus.py: NumPy's from_dlpack against the corpus, as NumPy's
own test suite would run it (docs/corpus.md). The xfails are findings each confirmed by a script
of its own (peers/confirm/major0_accepted.py)."""
import numpy as np
import pytest

from validator import corpus

KNOWN = {
    # peers/confirm/major0_accepted.py numpy: NumPy rejects only major > 1
    "version.major0.versioned": "from_dlpack imports a versioned tensor of major 0 and reads past its prefix",
}


@pytest.mark.parametrize("case", corpus.params(legal=True, xfail=KNOWN))
def test_from_dlpack(case):
    case.check(np.from_dlpack, isolate=True)


@pytest.mark.parametrize("case", corpus.params(legal=False, xfail=KNOWN))
def test_from_dlpack_refuses(case):
    case.check(np.from_dlpack, isolate=True)
