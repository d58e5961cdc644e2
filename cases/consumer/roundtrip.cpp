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
  // bcomplex32 (code 18) is on DLPack's main branch only: a consumer built on a released header
  // refuses it (a skip), one that knows it must read it right (a misread fails, as for any dtype).
  Declare("consumer.roundtrip", "{kind} import of a contiguous {dtype} tensor reads back right; deleter once, after release")
      .role(Role::consumer).device(kCpu0)
      .combine("dtype", {"float32", "int64", "bool", "complex64", "float16", "uint8", "float4_e2m1fn", "float6_e3m2fn",
                         "bcomplex32"},
               [](Declare& d, const std::string& t) {
                 // Sub-byte packing is its own rule (DTYPE-07).
                 if (t == "float4_e2m1fn" || t == "float6_e3m2fn") d.must({"DTYPE-07", "DEL-02"});
                 else d.must({"DEL-02", "LAYOUT-01"});
               })
      .combine("layout", {"contiguous"})
      .per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"double_delete"})
      .run(dtype_layout_roundtrip);
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
  // The 0-d sample's shape and strides are NULL pointers (LAYOUT-06: the consumer "has to accept
  // that"). A consumer whose arrays have no 0-d form at all (Awkward Array: it refuses a 0-d
  // tensor with its pointers set too) is refusing a tensor beyond what it can represent
  // (LAYOUT-14: "refused with BufferError"): that costs interoperability and warns; refusing
  // only the NULL pointers fails LAYOUT-06; misreading either fails.
  const bool no_scalars = spec.shape.empty() && !refuses_plain_scalar(ctx, ctx.versioned()).empty();
  consumer_roundtrip(ctx, spec, ctx.versioned(), first == "DEL-02" ? "LAYOUT-01" : first.c_str(),
                     no_scalars ? Refusal::warns : core ? Refusal::fails : Refusal::skips,
                     with_article(fmt::format("{} {} tensor", dtype_name(spec.dtype),
                                              spec.shape.empty() ? std::string("0-d") : shape_text(spec.shape))));
}

DLPV_CASES {
  // The rule samples the table above does not already cover (uint8, bool, float4_e2m1fn).
  Declare("consumer.roundtrip", "{kind} import of a {dtype} {shape} tensor reads back right; deleter once, after release")
      .role(Role::consumer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .combine("sample", {"scalar", "empty", "one", "ndim3", "complex128", "float8_e4m3fn"},
               [](Declare& d, const std::string& s) {
                 // A consumer without complex128 that reads it as another type misinterprets an
                 // unsupported dtype: DTYPE-08 ("raise BufferError rather than being
                 // misinterpreted"), a SHOULD, not a struct-layout fault.
                 if (s == "complex128") d.should({"DTYPE-08", "DEL-02"});
                 else
                   d.must(s == "scalar"  ? std::vector<std::string>{"LAYOUT-06", "DEL-02"}
                          : s == "empty" ? std::vector<std::string>{"LAYOUT-10", "DEL-02"}
                                         : std::vector<std::string>{"DEL-02", "LAYOUT-01"});
               })
      .per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"double_delete"})
      .run(sample_roundtrip);
}

}  // namespace
}  // namespace dlpv::cases
