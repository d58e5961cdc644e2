"""tests/python/corpus/test_torch_corpus.py: PyTorch's from_dlpack against the corpus, as
PyTorch's own test suite would run it (docs/corpus.md). The xfails are findings each confirmed by
a script of its own (peers/confirm/major0_accepted.py, negative_stride_import.py)."""
import pytest
import torch

from validator import corpus

KNOWN = {
    # peers/confirm/major0_accepted.py torch
    "version.major0.versioned": "from_dlpack imports a versioned tensor of major 0 and reads past its prefix",
    # peers/confirm/negative_stride_import.py torch
    "strides.negative.legacy": "from_dlpack aborts the process (SIGABRT) on a negative stride",
    "strides.negative.versioned": "from_dlpack aborts the process (SIGABRT) on a negative stride",
}


@pytest.mark.parametrize("case", corpus.params(legal=True, xfail=KNOWN))
def test_from_dlpack(case):
    case.check(torch.from_dlpack, isolate=True)


@pytest.mark.parametrize("case", corpus.params(legal=False, xfail=KNOWN))
def test_from_dlpack_refuses(case):
    case.check(torch.from_dlpack, isolate=True)
