// cases/producer/strides.cpp: producer.strides.*: strides are non-NULL for ndim > 0 when the
// tensor declares DLPack >= 1.2 (LAYOUT-02), on float32 3x4 and every rule sample.
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void strides_non_null(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "LAYOUT-02");
  ctx.phase("inspect");
  const DLPackVersion v = e.v->version;
  const bool v12 = v.major == 1 && v.minor >= 2;
  if (r.shape.empty()) {
    // dlpack.h 1.3: strides "can be NULL" when ndim == 0.
    ctx.check(true, "LAYOUT-02", e.v->dl_tensor.strides ? "a 0-d tensor with non-NULL strides"
                                                        : "a 0-d tensor may carry NULL strides");
  } else if (e.v->dl_tensor.strides) {
    ctx.check(true, "LAYOUT-02", "strides are non-NULL for ndim > 0");
  } else if (v12) {
    ctx.check(false, "LAYOUT-02", "a tensor declaring DLPack >= 1.2 must carry strides when ndim > 0",
              fmt::format("strides[{}]", r.shape.size()), fmt::format("NULL (declares {}.{})", v.major, v.minor));
  } else {
    ctx.check_as(Severity::may, true, "LAYOUT-02",
                 fmt::format("NULL strides allowed for a {}.{} tensor (deprecated from 1.2)", v.major, v.minor));
  }
}

DLPV_CASES {
  Declare("producer.strides.non_null", "strides are non-NULL for ndim > 0 when the tensor declares DLPack >= 1.2")
      .must({"LAYOUT-02"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .per_kind({StructKind::versioned}).per_sample()
      .proven_by({"null_strides_v13", "export_segfault"})  // 0-d and empty may carry NULL strides
      .run(strides_non_null);
}

}  // namespace
}  // namespace dlpv::cases
