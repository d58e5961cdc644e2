// cases/exchange_api/current_work_stream.cpp: exchange_api.current_work_stream.*: asked for the
// CPU, current_work_stream answers without failing (XAPI-15; any stream value is lawful).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/xapi.hpp"

namespace dlpv::cases {
namespace {

void current_stream_cpu(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->current_work_stream) ctx.skip("current_work_stream is NULL (reported by XAPI-08)");
  void* stream = reinterpret_cast<void*>(0x1);
  int rc = api->current_work_stream(kDLCPU, 0, &stream);
  ctx.check(rc == 0, "XAPI-15", "current_work_stream(kDLCPU, 0) succeeds", "0", std::to_string(rc));
  // dlpack.h (DLPackCurrentWorkStream): "When device_type is kDLCPU, the consumer do not have to
  // query the stream and the producer can simply return NULL when queried." Can, not must: any
  // value is lawful.
  if (rc == 0)
    ctx.note(stream ? fmt::format("current_work_stream(kDLCPU) gives {} (lawful: the CPU value is the producer's to choose)", stream)
                    : "current_work_stream(kDLCPU) gives NULL");
}

DLPV_CASES {
  Declare("exchange_api.current_work_stream.cpu", "current_work_stream(kDLCPU) returns 0 (any stream value is lawful)")
      .must({"XAPI-15"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"xapi_cpu_stream_fails"})
      .run(current_stream_cpu);
}

}  // namespace
}  // namespace dlpv::cases
