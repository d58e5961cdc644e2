// cases/python/xapi/current_work_stream.cpp: python.xapi.current_work_stream.*:
// current_work_stream on CUDA is the library's stream (XAPI-15).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

// XAPI-15 on CUDA: current_work_stream(kDLCUDA, 0) is the stream the library computes on,
// the one its adapter names (current_stream(), as for STRM-07).
void current_work_stream_cuda(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x);
    const long long current = current_cuda_stream(ctx, ps);
    if (!api->current_work_stream) ctx.skip("current_work_stream is NULL (exchange_api.table.required_pointers reports it)");
    void* stream = reinterpret_cast<void*>(uintptr_t{0xdeadbeef});
    const int rc = api->current_work_stream(kDLCUDA, 0, &stream);
    if (!ctx.check(rc == 0, "XAPI-15", "current_work_stream(kDLCUDA, 0) succeeds", "0", std::to_string(rc))) return;
    const auto want = static_cast<uintptr_t>(current);
    ctx.check(reinterpret_cast<uintptr_t>(stream) == want, "XAPI-15",
              "current_work_stream(kDLCUDA, 0) is the library's current CUDA stream", fmt::format("{:#x}", want),
              fmt::format("{}", stream));
  });
}

DLPV_CASES {
  Declare("python.xapi.current_work_stream.cuda",
          "current_work_stream(kDLCUDA, 0) is the library's current CUDA stream")
      .must({"XAPI-15"}).python()
      .proven_by({"xapi_stream_null"})
      .run(current_work_stream_cuda);
}

}  // namespace
}  // namespace dlpv::python
