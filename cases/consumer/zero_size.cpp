// cases/consumer/zero_size.cpp: consumer.zero_size.*: tensors without elements, in every stride
// convention producers use for them (compact, all zero, the shape written as strides) and with
// data NULL or not. A zero-size tensor whose data is NULL imports as an empty array (LAYOUT-10);
// with data set a refusal warns; none is misread, crashed on or released wrongly.
// SPDX-License-Identifier: Apache-2.0
#include "support/consumer_flow.hpp"

#include <fmt/format.h>

#include <iterator>

namespace dlpv::cases {
namespace {

void zero_size_null_data(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape = {0, 3};
  spec.null_data = true;
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-10", Refusal::fails, "a (0, 3) tensor whose data is NULL");
}

// A zero-size tensor addresses no element, so no stride of it is wrong: producers write the
// compact strides, zeros (NumPy 1.24 gives an empty array the strides (0, 0)), or copy the shape
// into the strides (a 2026 bug class: PaddlePaddle #78565, apache/tvm-ffi #607). A consumer that
// computes the span its strides reach without noticing that an extent is 0 reads through `data`
// (NULL here), or refuses a tensor that has nothing to lay out.
// - data NULL: LAYOUT-10, "a consumer must take NULL data whenever some shape[i] == 0", whatever
//   the strides: a refusal fails, as on the compact strides above;
// - data set (LAYOUT-10's producer SHOULD is NULL; the Python spec allows a pointer or NULL): the
//   MUST does not bind, but a tensor without elements is compact whatever its strides say, so a
//   refusal for them costs interoperability: a warning (LAYOUT-11 for the zero strides, which
//   the consumer "either imports ... with the right values or raises BufferError"; LAYOUT-10
//   otherwise). The compact strides with data set are consumer.roundtrip.empty.
struct ZeroSize {
  const char* id;
  const char* strides_name;  // how the strides are written
  std::vector<int64_t> strides;
  bool null_data;
  const char* rule;
};

void zero_size_strided(CaseContext& ctx, const ZeroSize& z) {
  MadeSpec spec;
  spec.shape = {0, 3};
  spec.strides = z.strides;
  spec.null_data = z.null_data;
  const std::string what = fmt::format("a (0, 3) tensor with strides ({}, {}) ({}) whose data is {}", z.strides[0],
                                       z.strides[1], z.strides_name, z.null_data ? "NULL" : "a valid pointer");
  consumer_roundtrip(ctx, spec, ctx.versioned(), z.rule, z.null_data ? Refusal::fails : Refusal::warns, what);
}

DLPV_CASES {
  Declare("consumer.zero_size.null_data", "a zero-size tensor with NULL data imports as an empty array")
      .must({"LAYOUT-10", "DEL-02"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::read_array, need::release_array}).per_kind(kBothKinds)
      .proven_by({"reject_null_data"})
      .run(zero_size_null_data);
  static const ZeroSize kConventions[] = {
      {"consumer.zero_size.zero_strides.null_data", "all zero", {0, 0}, true, "LAYOUT-10"},
      {"consumer.zero_size.shape_strides.null_data", "the shape", {0, 3}, true, "LAYOUT-10"},
      {"consumer.zero_size.zero_strides.with_data", "all zero", {0, 0}, false, "LAYOUT-11"},
      {"consumer.zero_size.shape_strides.with_data", "the shape", {0, 3}, false, "LAYOUT-10"},
  };
  for (const ZeroSize& z : kConventions) {
    Declare d(z.id, fmt::format("a zero-size tensor whose strides are {} and whose data is {} imports as an "
                                "empty array{}",
                                z.strides_name, z.null_data ? "NULL" : "a valid pointer",
                                z.null_data ? "" : " (a refusal warns)"));
    if (z.null_data)
      d.must({z.rule, "DEL-02"});
    else
      d.should({z.rule, "DEL-02"});
    d.role(Role::consumer)
        .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
        .needs({need::read_array, need::release_array}).per_kind(kBothKinds)
        .proven_by({z.null_data ? "zero_size_span" : "empty_deleted_twice"})
        .run([z](CaseContext& ctx) { zero_size_strided(ctx, z); });
  }
}

}  // namespace
}  // namespace dlpv::cases
