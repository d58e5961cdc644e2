// cases/python/stream.cpp: python.stream.*: non-None streams for CPU arrays are rejected
// (STRM-04).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::py_shim {
namespace {

void stream_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32, "contiguous", false, DLDevice{kDLCPU, 0});  // a CUDA-only package: a skip
    for (int s : {1, 2}) {
      py::dict kw = newest_kwargs(ps);
      kw["stream"] = s;
      Call c = call_dlpack(x, kw);
      ctx.check(c.raised, "STRM-04", fmt::format("stream={} for a CPU array (streams must be None there) is rejected", s),
                "an exception", c.what());
    }
  });
}

DLPV_CASES {
  Declare("python.stream.cpu_rejects", "non-None streams for CPU arrays are rejected")
      .should({"STRM-04"}).python().also_needs(need::producer_protocol)
      .proven_by({"stream_accepted"})
      .run(stream_cpu);
}

}  // namespace
}  // namespace dlpv::py_shim
