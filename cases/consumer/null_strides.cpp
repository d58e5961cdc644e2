// cases/consumer/null_strides.cpp: consumer.null_strides.*: NULL strides (legal up to 1.1) are
// read as compact row-major (LAYOUT-03).
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void null_strides(CaseContext& ctx) {
  MadeSpec spec;
  spec.null_strides = true;
  spec.version = DLPackVersion{1, 1};  // NULL strides are legal up to 1.1 (LAYOUT-02)
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-03", Refusal::fails,
                     "a 3x4 tensor with NULL strides (compact row-major)");
}

DLPV_CASES {
  Declare("consumer.null_strides", "{kind} import of a tensor with NULL strides reads it as compact row-major")
      .must({"LAYOUT-03", "DEL-02"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .combine("kind", {"versioned", "legacy"}, [](Declare& d, const std::string& k) {
        if (k == "versioned") d.title(d.info().title + " (version 1.1)");
      })
      .needs({need::read_array, need::release_array})
      .proven_by({"null_strides_crash"})
      .run(null_strides);
}

}  // namespace
}  // namespace dlpv::cases
