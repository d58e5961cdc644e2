// cases/consumer/scalar.cpp: consumer.scalar.*: a 0-d tensor whose shape and strides are NULL
// imports as a scalar (LAYOUT-06).
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void scalar_null_shape(CaseContext& ctx) {
  // LAYOUT-06 is about NULL shape and strides. A consumer whose arrays have no 0-d form at all
  // (Awkward Array: "Encountered a scalar ... scalar conversion/promotion is disabled") refuses
  // a 0-d tensor that has a shape too: what it does with NULL ones cannot be seen, and the
  // refusal itself is consumer.roundtrip.scalar's to judge.
  const std::string refused = refuses_plain_scalar(ctx, ctx.versioned());
  if (!refused.empty())
    ctx.skip("the consumer takes no 0-d tensor at all: it refused one whose shape and strides are set too (" + refused +
             "); consumer.roundtrip.scalar judges that refusal");
  MadeSpec spec;
  spec.shape = {};
  spec.null_shape = true;
  spec.null_strides = true;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-06", Refusal::fails,
                     "a 0-d tensor whose shape and strides are NULL (one element at data + byte_offset)");
}

DLPV_CASES {
  Declare("consumer.scalar.null_shape", "a 0-d tensor with NULL shape and strides imports as a scalar")
      .must({"LAYOUT-06", "DEL-02"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::read_array, need::release_array}).per_kind(kBothKinds)
      .proven_by({"reject_null_shape"})
      .run(scalar_null_shape);
}

}  // namespace
}  // namespace dlpv::cases
