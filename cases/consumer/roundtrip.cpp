// cases/consumer/roundtrip.cpp: consumer.roundtrip.*: a consumer imports validator-made compact
// tensors of several dtypes and shapes, reads them back right and calls the deleter once, after
// release (DEL-02, LAYOUT-01/06/10, DTYPE-07).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  // dtype_layout_roundtrip (support/consumer_flow.cpp) is the body: compact 3x4 tensors.
  const struct { const char* dtype; const char* req; } combos[] = {
      {"float32", "DEL-02"}, {"int64", "DEL-02"}, {"bool", "DEL-02"}, {"complex64", "DEL-02"},
      {"float16", "DEL-02"}, {"uint8", "DEL-02"}, {"float4_e2m1fn", "DTYPE-07"}, {"float6_e3m2fn", "DTYPE-07"}};
  for (StructKind k : kBothKinds)
    for (const auto& c : combos) {
      const std::string req = c.req;
      Declare(fmt::format("consumer.roundtrip.{}.contiguous.{}", c.dtype, to_string(k)),
              fmt::format("{} import of a contiguous {} tensor reads back right; deleter once, after release",
                          to_string(k), c.dtype))
          .must(req == "DEL-02" ? std::vector<std::string>{"DEL-02", "LAYOUT-01"} : std::vector<std::string>{req, "DEL-02"})
          .role(Role::consumer).kind(k).dtype(c.dtype).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
          .needs({import_need(k), "read_array", "release_array"})
          .proven_by({"double_delete"})
          .run(dtype_layout_roundtrip);
    }
}

// The per-tensor rule samples the dtype/layout combinations above do not cover already: the
// deleter accounting (DEL-02) and the read-back on 0-d, empty, size-1 and 3-d float32 tensors,
// and on complex128 and fp8 elements. A consumer must take 0-d (LAYOUT-06) and empty
// (LAYOUT-10) tensors; any float32 tensor is ordinary; other element types are optional.
void sample_roundtrip(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  spec.shape = shape_named(ctx.shape_name());
  const bool core = dtype_name(spec.dtype) == "float32";
  const std::string& first = ctx.info().requirements.front();
  consumer_roundtrip(ctx, spec, ctx.versioned(), first == "DEL-02" ? "LAYOUT-01" : first.c_str(),
                     core ? Refusal::fails : Refusal::skips,
                     fmt::format("a {} {} tensor", dtype_name(spec.dtype),
                                 spec.shape.empty() ? std::string("0-d")
                                                    : shape_text(spec.shape.data(), static_cast<int32_t>(spec.shape.size()))));
}

DLPV_CASES {
  for (StructKind k : kBothKinds)
    for (const Sample& sm : rule_samples()) {
      const std::string name = sm.name;
      if (name == "uint8" || name == "bool" || name == "float4_e2m1fn") continue;  // in the table above
      Declare(fmt::format("consumer.roundtrip.{}.{}", name, to_string(k)),
              fmt::format("{} import of a {} {} tensor reads back right; deleter once, after release", to_string(k),
                          sm.dtype, sm.shape))
          .must(name == "scalar"  ? std::vector<std::string>{"LAYOUT-06", "DEL-02"}
                : name == "empty" ? std::vector<std::string>{"LAYOUT-10", "DEL-02"}
                                  : std::vector<std::string>{"DEL-02", "LAYOUT-01"})
          .role(Role::consumer).kind(k).dtype(sm.dtype).shape(sm.shape).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
          .needs({import_need(k), "read_array", "release_array"})
          .proven_by({"double_delete"})
          .run(sample_roundtrip);
    }
}

}  // namespace
}  // namespace dlpv::cases
