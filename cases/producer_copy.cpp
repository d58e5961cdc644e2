// cases/producer_copy.cpp: copy=False (DLPV_REQ_NO_COPY) on the producer side (KW-04). The
// array API (__dlpack__, copy): "If False, the function must never copy, and raise a
// BufferError in case a copy is deemed necessary". A CPU export needs no copy, so it must
// succeed without one; a CUDA array asked for on the CPU (dl_device) needs one, so it must be
// refused.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void zero_copy(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_NO_COPY);
  Exported e;
  const int rc = export_raw(ctx, versioned, r, e);
  // The text raises BufferError only "in case a copy is deemed necessary": a refusal where none
  // is needed breaks nothing the spec requires, so it is a warning; a copy is a failure.
  if (!ctx.check_as(Severity::should, rc == DLPV_OK && (e.v || e.l), "KW-04",
                    "copy=False on a CPU array is exported (no copy is needed, so nothing calls for a refusal)",
                    "DLPV_OK", fmt::format("return {}: {}", rc, ctx.subject().last_error())))
    return;
  inspect_export(ctx, e, r, versioned);
  if (versioned)
    ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "KW-04",
              "copy=False never copies: the export does not carry IS_COPIED", "bit 1 clear",
              fmt::format("flags = {:#x} (a copy was made)", e.v->flags));
}

void needs_copy(CaseContext& ctx) {
  need_cuda(ctx, 0);
  const bool versioned = ctx.param("version") == "versioned";
  Request r(DLDataType{kDLFloat, 32, 1}, {3, 4}, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_NO_COPY);
  r.req.device = DLDevice{kDLCUDA, 0};
  r.req.target_device = DLDevice{kDLCPU, 0};
  Exported e;
  const int rc = export_raw(ctx, versioned, r, e);
  if (rc != DLPV_OK) {
    ctx.check(true, "KW-04", fmt::format("a CUDA array asked for on the CPU with copy=False is refused (return {}: {})",
                                         rc, ctx.subject().last_error()));
    return;
  }
  std::string what = "exported it";
  if (e.v || e.l) {
    const DLTensor& t = e.tensor();
    what = fmt::format("exported a {} tensor{}", device_name(t.device),
                       e.v && (e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) ? " flagged IS_COPIED" : "");
  }
  ctx.check(false, "KW-04",
            "copy=False with dl_device=(kDLCPU, 0) for a CUDA array needs a copy, so it must be refused",
            "a refusal (BufferError)", what);
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(producer_copy) {
  using namespace dlpv;
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    CaseInfo c;
    c.id = "producer.copy.false_zero_copy." + kind;
    c.title = "copy=False on a CPU array exports it without a copy";
    c.requirements = {"KW-04"};
    c.role = Role::producer;
    c.params = {{"dtype", "float32"}, {"shape", "3x4"}, {"version", kind}, {"device", "cpu:0"}};
    c.needs = {versioned ? "export_versioned" : "export_legacy", "copy_keyword"};
    c.body = cases::zero_copy;
    reg.add(c);
    c.id = "producer.copy.false_needs_copy.cuda0." + kind;
    c.title = "copy=False with dl_device=CPU for a CUDA array is refused (a copy would be needed)";
    c.params = {{"dtype", "float32"}, {"version", kind}, {"device", "cuda0"}};
    c.body = cases::needs_copy;
    reg.add(std::move(c));
  }
}
