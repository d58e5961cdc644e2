// cases/producer/copy.cpp: producer.copy.*: copy=False (DLPV_REQ_NO_COPY) on the producer side
// (KW-04). The array API (__dlpack__, copy): "If False, the function must never copy, and raise
// a BufferError in case a copy is deemed necessary". A CPU export needs no copy, so it must
// succeed without one; a CUDA array asked for on the CPU (dl_device) needs one, so it must be
// refused.
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void zero_copy(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_NO_COPY);
  Exported e;
  const int rc = export_raw(ctx, versioned, r, e);
  // A legacy request (max_version=None) may be refused outright: the array API's __dlpack__
  // pseudo-code says of that branch "from March 2025 onwards (...) it's okay to raise
  // BufferError here". A clean refusal (BufferError from a Python package) is lawful.
  const std::string why = ctx.subject().last_error();
  if (!versioned && rc == DLPV_UNSUPPORTED &&
      (ctx.subject().info().kind != "python" || why.find("raised BufferError") != std::string::npos)) {
    ctx.check(true, "KW-04",
              "a legacy request (no max_version) with copy=False is refused cleanly; the array API allows it: "
              "\"from March 2025 onwards (...) it's okay to raise BufferError here\"",
              "an export or a BufferError", why);
    return;
  }
  // A producer that never lends its storage (support/helpers.hpp: never_lends) deems a copy
  // necessary for every export, so its refusal is the answer the text asks for.
  const bool plugin = ctx.subject().info().kind != "python";
  const std::string never = rc == DLPV_UNSUPPORTED && (versioned || !plugin) ? never_lends(ctx, r) : std::string();
  // (A plugin's clean refusal is DLPV_UNSUPPORTED; a Python package's must be a BufferError.)
  if (rc == DLPV_UNSUPPORTED && !never.empty() && (plugin || why.find("raised BufferError") != std::string::npos)) {
    ctx.check(true, "KW-04", "copy=False is refused (BufferError, the array API's word) by a producer that never lends its storage (" +
                                 never + ")");
    return;
  }
  // The text raises BufferError only "in case a copy is deemed necessary": a refusal where none
  // is needed breaks nothing the spec requires, so it is a warning; a copy is a failure.
  if (!ctx.check_as(Severity::should, rc == DLPV_OK && (e.v || e.l), "KW-04",
                    "copy=False on a CPU array is exported (no copy is needed, so nothing calls for a refusal)",
                    exported(ctx), refusal_seen(ctx, rc, ctx.subject().last_error())))
    return;
  inspect_export(ctx, e, r, versioned);
  if (versioned)
    ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "KW-04",
              "copy=False never copies: the export does not carry IS_COPIED", "bit 1 clear",
              fmt::format("flags = {:#x} (a copy was made)", e.v->flags));
}

DLPV_CASES {
  Declare("producer.copy.false_zero_copy", "copy=False on a CPU array exports it without a copy")
      .must({"KW-04"}).role(Role::producer)
      .dtype("float32").shape("3x4").device(kCpu0)
      .needs({need::copy_keyword}).per_kind(kBothKinds)
      .proven_by({"no_copy_refused", "strides_in_bytes"})  // the legacy kind may refuse lawfully
      .run(zero_copy);
}

void needs_copy(CaseContext& ctx) {
  need_cuda(ctx, 0);
  const bool versioned = ctx.versioned();
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
    what = fmt::format("exported {} tensor{}", with_article(device_name(t.device)),
                       e.v && (e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) ? " flagged IS_COPIED" : "");
  }
  ctx.check(false, "KW-04",
            "copy=False with dl_device=(kDLCPU, 0) for a CUDA array needs a copy, so it must be refused",
            "a refusal (BufferError)", what);
}

DLPV_CASES {
  Declare("producer.copy.false_needs_copy.cuda0",
          "copy=False with dl_device=CPU for a CUDA array is refused (a copy would be needed)")
      .must({"KW-04"}).role(Role::producer)
      .dtype("float32").device(CaseDevice{{kDLCUDA, 0}, "cuda0"})
      .needs({need::copy_keyword, need::cuda_driver}).per_kind(kBothKinds)
      .proven_by({"no_copy_ignored"})
      .run(needs_copy);
}

}  // namespace
}  // namespace dlpv::cases
