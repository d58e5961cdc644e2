"""What a producer does with unusual __dlpack__ keywords on a CPU array.
Usage: python3 producer_kwargs.py LIB KWARGS_PYTHON_LITERAL EXPECTED ('capsule' or an exception type;
'capsule@TYPE' also checks the tensor's device_type, e.g. capsule@1 for a CPU tensor)
Cases: STRM-04 stream=1 on CPU (python.stream.cpu_rejects, stream.cpu.rejects_stream.*), ERR-02
bad values (python.kw.invalid_arguments), VER-08 max_version=(0, 8), KW-03 copy=True, KW-04
copy=False on a legacy export, DEV-06 dl_device."""
import ast
import sys

import numpy as np

from _dl import capsule_name, confirmed, managed
from _libs import lib

name, kwargs, expected = sys.argv[1], ast.literal_eval(sys.argv[2]), sys.argv[3]
make, _ = lib(name)
x = make(np.arange(6, dtype=np.float32))
try:
    cap = x.__dlpack__(**kwargs)
except Exception as e:  # noqa: BLE001
    assert type(e).__name__ == expected, f"{type(e).__name__}: {e}"
    confirmed(f"{name}: __dlpack__(**{kwargs}) -> {type(e).__name__}: {str(e)[:120]}")
else:
    assert expected.split("@")[0] == "capsule", f"returned a '{capsule_name(cap)}' capsule"
    device = managed(cap).dl_tensor.device_type
    if "@" in expected:
        assert device == int(expected.split("@")[1]), f"the tensor's device_type is {device}"
    confirmed(f"{name}: __dlpack__(**{kwargs}) returned a '{capsule_name(cap)}' capsule, device_type {device}")
