// cases/consumer/large.cpp: consumer.large.*: the round trip, a strided layout and byte_offset
// on a large tensor (float32 1024x1024, 1 Mi elements, 4 MiB), every byte compared: a consumer
// may take another path for large arrays (a bulk copy, a threaded gather) that small ones never
// reach. The rules are those of the small cases: LAYOUT-01 (the struct is read as declared) and
// LAYOUT-08 (dlpack.h: data + byte_offset is where element 0 lives).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void large(CaseContext& ctx) {
  const std::string& kind = ctx.info().params.at("tensor");
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  spec.shape = shape_named("large");
  if (kind == "strided") spec.layout = DLPV_LAYOUT_STRIDED;
  if (kind == "byte_offset") spec.extra_byte_offset = 64;
  // A compact float32 array every consumer must take; a strided one it may refuse cleanly;
  // byte_offset as in consumer.byte_offset (a refusal costs interoperability: a warning).
  const Refusal refusal = kind == "strided" ? Refusal::allowed : kind == "byte_offset" ? Refusal::warns : Refusal::fails;
  consumer_roundtrip(ctx, spec, ctx.versioned(), kind == "byte_offset" ? "LAYOUT-08" : "LAYOUT-01", refusal,
                     fmt::format("a float32 1024x1024 tensor ({})", kind));
}

DLPV_CASES {
  Declare("consumer.large", "{kind} import of a large (1 Mi elements) {tensor} float32 tensor reads back every byte right")
      .role(Role::consumer).dtype("float32").shape("large").device(kCpu0)
      .combine("tensor", {"contiguous", "strided", "byte_offset"}, [](Declare& d, const std::string& t) {
        if (t == "byte_offset") d.must({"LAYOUT-08", "DEL-02"});
        else d.must({"LAYOUT-01", "DEL-02"});
      })
      .per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"large_ignores_offset", "ignore_strides", "double_delete"})
      .run(large);
}

}  // namespace
}  // namespace dlpv::cases
