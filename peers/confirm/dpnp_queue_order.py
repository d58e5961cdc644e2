"""STRM-05 (a MUST): given a consumer stream, "the producer makes the data safe to use on it". For
SYCL the array API's __dlpack__ text suggests a stream be "an object containing an in-order
sycl::queue". This script exports a dpnp array whose last copy kernel is still queued with
__dlpack__(stream=q) and reads the exported bytes back by a USM copy on q, TRIALS times each for:

- q in order, stream=q (what python.stream.queue_ordered asks): every read must see the final
  elements; the script confirms when none is stale;
- q in order, no stream (the control): stale reads here show the trial can catch a missing order
  (they need a busy machine: the copy kernel is short);
- q out of order, stream=q: printed only. dpnp puts a barrier on q that waits for the array's
  queue, but on the OpenCL CPU runtime a copy submitted to an out-of-order q after that barrier
  may still start before it ends, so stale reads here are the runtime's, not dpnp's (why the
  adapter's make_stream gives in-order queues).

Case: python.stream.queue_ordered.   Usage: python3 dpnp_queue_order.py dpnp [TRIALS]"""
import sys

import numpy as np

from _dl import not_applicable, verdict

if sys.argv[1] != "dpnp":
    not_applicable(f"{sys.argv[1]}: the script makes dpctl queues for dpnp arrays only")
import dpctl  # noqa: E402
import dpctl.memory as dpm  # noqa: E402
import dpnp  # noqa: E402

trials = int(sys.argv[2]) if len(sys.argv) > 2 else 100
home = dpctl.SyclQueue()
shape = (256, 256)
final = np.arange(shape[0] * shape[1], dtype=np.float32).reshape(shape) + 1


def stale_reads(in_order, ask_stream):
    stale = 0
    for _ in range(trials):
        src = dpnp.asarray(final, sycl_queue=home)
        a = dpnp.zeros(shape, dtype=np.float32, sycl_queue=home)
        home.wait()
        a[...] = src  # queued on the array's queue, not waited for
        q = dpctl.SyclQueue(home.sycl_context, home.sycl_device, **({"property": "in_order"} if in_order else {}))
        capsule = a.__dlpack__(stream=q) if ask_stream else a.__dlpack__()
        usm = a.get_array().usm_data
        nbytes = a.size * a.itemsize

        class Span:  # the array's bytes, as USM that q may read
            __sycl_usm_array_interface__ = {"data": (usm._pointer, True), "shape": (nbytes,), "typestr": "|u1",
                                            "version": 1, "syclobj": q}

        host = np.empty(nbytes, dtype=np.uint8)
        q.memcpy(host, dpm.as_usm_memory(Span()), nbytes)
        stale += not np.array_equal(host.view(np.float32).reshape(shape), final)
        home.wait()
        del capsule
    return stale


ordered = stale_reads(True, True)
control = stale_reads(True, False)
out_of_order = stale_reads(False, True)
print(f"stale reads of {trials}: in-order q with stream=q {ordered}; in-order q, no stream {control}; "
      f"out-of-order q with stream=q {out_of_order} (dpnp {dpnp.__version__}, dpctl {dpctl.__version__})")
verdict(ordered == 0, f"dpnp orders __dlpack__(stream=q) after the array's queued copy on an in-order queue q: "
        f"{trials} of {trials} reads on q saw the final elements")
