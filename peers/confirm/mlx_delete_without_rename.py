"""mlx: from_dlpack copies the data and calls the tensor's deleter during the import, but leaves
the capsule named 'dltensor' (unconsumed), so the producer's capsule destructor will call the
deleter a second time (DEL-02/DEL-08: before the rename the consumer must not call it; CAP-05).
Case: python.consumer.capsule_renamed."""
import mlx.core as mx
import numpy as np

from _dl import Producer, capsule_name, confirmed

p = Producer(np.arange(12, dtype=np.float32))
a = mx.from_dlpack(p)
assert p.deleter_calls == 1 and capsule_name(p.capsule) == "dltensor", (p.deleter_calls, capsule_name(p.capsule))
confirmed(f"mlx {mx.__version__}: deleter called {p.deleter_calls}x during import, capsule still '{capsule_name(p.capsule)}'")
