"""A stand-in for an ml_dtypes that is installed but cannot be imported beside the NumPy on the
path (a partner venv's ml_dtypes, built for NumPy 2, seen by a release pinned to NumPy 1.23, as in
the atlas's MXNet sweep): importing it raises AttributeError, not ImportError. The validator's own
helpers must take that as "no ml_dtypes", never charge it to the library under test
(tests/python/check_generic.py)."""
raise AttributeError("module 'numpy' has no attribute 'exceptions'")
