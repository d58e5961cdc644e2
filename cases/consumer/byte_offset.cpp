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
  for (StructKind k : kBothKinds)
    Declare(std::string("consumer.byte_offset.") + to_string(k),
            std::string(to_string(k)) + " import honours byte_offset (elements start at data + 64)")
        .must({"LAYOUT-08", "DEL-02"}).role(Role::consumer)
        .kind(k).dtype("float32").layout(DLPV_LAYOUT_OFFSET).device(kCpu0)
        .needs({import_need(k), "read_array", "release_array"})
        .proven_by({"ignore_byte_offset"})
        .run(byte_offset);
}

}  // namespace
}  // namespace dlpv::cases
