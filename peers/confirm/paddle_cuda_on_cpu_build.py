"""paddle (CPU build): importing a tensor labelled kDLCUDA kills the process with SIGSEGV instead
of refusing it (DEV-04: refuse with BufferError; a crash is never lawful).
Cases: consumer.refuse.device.cuda.*, python.consumer.device.query_first/.to_cpu,
python.consumer.stream.cuda."""
import sys

from _dl import confirmed, dies_with_signal

sig = dies_with_signal(f"""
import sys; sys.path.insert(0, {repr(sys.path[0])})
import numpy as np, paddle
from _dl import Producer
paddle.from_dlpack(Producer(np.arange(4, dtype=np.float32), device=(2, 0)))
""")
assert sig == 11, f"signal {sig}"
confirmed("paddle: from_dlpack of a kDLCUDA-labelled tensor dies with SIGSEGV on the CPU build")
