// cases/consumer/zero_size.cpp: consumer.zero_size.*: a zero-size tensor whose data is NULL
// imports as an empty array (LAYOUT-10).
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void zero_size_null_data(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape = {0, 3};
  spec.null_data = true;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-10", Refusal::fails, "a (0, 3) tensor whose data is NULL");
}

DLPV_CASES {
  Declare("consumer.zero_size.null_data", "a zero-size tensor with NULL data imports as an empty array")
      .must({"LAYOUT-10", "DEL-02"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::read_array, need::release_array}).per_kind(kBothKinds)
      .proven_by({"reject_null_data"})
      .run(zero_size_null_data);
}

}  // namespace
}  // namespace dlpv::cases
