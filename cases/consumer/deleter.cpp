// cases/consumer/deleter.cpp: consumer.deleter.*: a NULL deleter is accepted and never called
// (DEL-03).
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void null_deleter(CaseContext& ctx) {
  MadeSpec spec;
  spec.deleter = DeleterKind::null;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "DEL-03", Refusal::fails, "a tensor whose deleter is NULL");
}

DLPV_CASES {
  Declare("consumer.deleter.null", "{kind} import accepts a NULL deleter and never calls it")
      .must({"DEL-03"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0).per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"null_deleter_called"})
      .run(null_deleter);
}

}  // namespace
}  // namespace dlpv::cases
