"""dpnp: __dlpack__(copy=True) without max_version (the legacy path) returns the array's own
memory (KW-03, a MUST: copy=True "must always copy"), whatever its layout or writability; with
max_version=(1, 3) it copies.
Cases: python.request.mv_none.copy_true.*."""
import dpnp
import numpy as np

from _dl import confirmed, managed


def aliases(x, **kw):
    t = managed(x.__dlpack__(**kw)).dl_tensor
    return t.data + t.byte_offset == x.__sycl_usm_array_interface__["data"][0]


seen = []
for strided in (False, True):
    for writable in (True, False):
        x = dpnp.asarray(np.arange(24, dtype=np.float32))
        x = x[::2] if strided else x
        x.flags.writable = writable
        seen.append((aliases(x, copy=True), aliases(x, copy=True, max_version=(1, 3))))
assert all(legacy and not versioned for legacy, versioned in seen), seen
confirmed("dpnp: __dlpack__(copy=True) aliases the array on the legacy path (no max_version), for compact, strided, "
          "writable and read-only arrays; with max_version=(1, 3) it copies")
