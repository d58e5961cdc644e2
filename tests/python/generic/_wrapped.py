"""The array type the hostile test packages of this folder hand out: a NumPy array behind a
__dlpack__ that passes on only the keywords given (NumPy before 2 takes stream= alone)."""


class Array:
    def __init__(self, data):
        self._data = data

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        kw = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
        return self._data.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()
