"""jax: a tensor whose deleter is NULL (legal: "It can be NULL if there is no way for the caller
to provide a reasonable destructor") cannot be imported: RuntimeError('bad_function_call'), or
the process aborts when the array dies (DEL-03, a MUST).
Cases: consumer.deleter.null.legacy, python.consumer.deleter.null."""
import subprocess
import sys

from _dl import confirmed

code = f"""
import sys; sys.path.insert(0, {repr(sys.path[0])})
import gc, numpy as np, jax.numpy as jnp
from _dl import Producer
p = Producer(np.arange(16, dtype=np.float32), null_deleter=True)
try:
    y = jnp.from_dlpack(p)
except RuntimeError as e:
    print('RuntimeError', e); sys.exit(3)
del y; gc.collect()
print('ok')
"""
r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
assert r.returncode in (3, -6), (r.returncode, r.stdout[-200:], r.stderr[-200:])
confirmed("jax: a NULL-deleter tensor " + ("raises " + r.stdout.strip()[:80] if r.returncode == 3
                                          else "aborts the process (SIGABRT) when its array dies"))
