// cases/consumer/ndim65.cpp: consumer.ndim65.*: more dimensions than a library may support are
// refused cleanly or read right, never overflowing (LAYOUT-14, DEL-08).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

// 65 dimensions: refusing (NumPy's limit is 64) or reading it right are both fine.
void ndim65(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape.assign(65, 1);
  spec.shape[64] = 2;
  spec.version = DLPackVersion{1, 3};
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (!array) {
    judge_refusal_ownership(ctx, *made, "65 dimensions");
    ctx.check(true, "LAYOUT-14", fmt::format("refused a 65-dimensional tensor cleanly ({})", rc));
    return;
  }
  read_back_matches(ctx, array, made->expected(), spec.dtype, "LAYOUT-14",
                    "a consumer that accepts 65 dimensions reads them right");
  release_expecting_one_delete(ctx, array, *made);
}

DLPV_CASES {
  Declare("consumer.ndim65", "a 65-dimensional tensor is refused cleanly or read right, never overflowing")
      .should({"LAYOUT-14", "DEL-08"}).role(Role::consumer).dtype("float32")
      .needs({need::read_array, need::release_array}).per_kind({StructKind::versioned})
      .proven_by({"ndim_overflow"})
      .run(ndim65);
}

}  // namespace
}  // namespace dlpv::cases
