// cases/consumer/byte_offset.cpp: consumer.byte_offset.*: elements start at data + byte_offset
// (LAYOUT-08).
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

// LAYOUT-08: a consumer that takes the tensor must add byte_offset (misreading fails); dlpack.h
// does not oblige it to take every byte_offset, so a clean refusal is a warning (TensorFlow
// refuses any non-zero byte_offset).
void byte_offset(CaseContext& ctx) {
  MadeSpec spec;
  spec.extra_byte_offset = 64;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-08", Refusal::warns,
                     "a tensor whose elements start at data + byte_offset (64)");
}

DLPV_CASES {
  Declare("consumer.byte_offset", "{kind} import honours byte_offset (elements start at data + 64)")
      .must({"LAYOUT-08", "DEL-02"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_OFFSET).device(kCpu0).per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"ignore_byte_offset"})
      .run(byte_offset);
}

}  // namespace
}  // namespace dlpv::cases
