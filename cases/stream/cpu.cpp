// cases/stream/cpu.cpp: stream.cpu.*: a CPU export given a stream refuses it (STRM-04; runs
// everywhere).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {


// STRM-04 (runs everywhere): a CPU export with a stream must be refused.
void cpu_rejects_stream(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.stream = 1;
  Exported e;
  const int rc = export_raw(ctx, versioned, r, e);
  ctx.check(rc != DLPV_OK, "STRM-04", "a CPU export given a stream (1) is refused: CPU arrays take stream=None only",
            "a refusal", "exported (the stream value was accepted)");
}

DLPV_CASES {
  Declare("stream.cpu.rejects_stream", "a CPU export refuses a stream value (CPU takes stream=None only)")
      .should({"STRM-04"}).role(Role::producer)
      .device(CaseDevice{{kDLCPU, 0}, "cpu"})
      .per_kind(kBothKinds)
      .proven_by({"stream_accepted_cpu"})
      .run(cpu_rejects_stream);
}

}  // namespace
}  // namespace dlpv::cases
