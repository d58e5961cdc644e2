// cases/producer_tensor.cpp: a producer's tensor is well-formed and holds the right data,
// per dtype, layout and struct kind (LAYOUT-01/04/05/07, DTYPE-01/02/03, DEV-02/03).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void body(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  const DLDataType dtype = *dtype_from_name(ctx.param("dtype"));
  const uint32_t layout = *layout_from_name(ctx.param("layout"));
  Request r(dtype, {3, 4}, layout);
  Exported e = export_or_skip(ctx, versioned, r);
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = dtype;
  want.shape = r.shape;
  want.layout = layout;
  InspectOptions opt;
  opt.versioned = versioned;
  opt.version = versioned ? e.v->version : ctx.subject().info().dlpack_version;
  std::vector<Finding> findings;
  inspect_tensor(e.tensor(), want, opt, findings);
  record(ctx, findings);
  ctx.phase("deleter");
  e.release();
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(producer_tensor) {
  using namespace dlpv;
  const std::pair<const char*, const char*> combos[] = {
      {"float32", "contiguous"}, {"int64", "contiguous"}, {"float32", "fortran"},
      {"float32", "strided"},    {"float32", "offset"},   {"float32", "reversed"},
      {"float32", "broadcast"},  {"int64", "fortran"}};
  for (bool versioned : {true, false}) {
    for (const auto& [dtype, layout] : combos) {
      CaseInfo c;
      c.id = fmt::format("producer.tensor.{}.{}.{}", dtype, layout, cases::kind_name(versioned));
      c.title = fmt::format("{} {} export of a 3x4 {} array is well-formed and holds the pattern",
                            cases::kind_name(versioned), layout, dtype);
      c.requirements = {"LAYOUT-05", "LAYOUT-01", "LAYOUT-04", "LAYOUT-07", "DTYPE-02", "DEV-02"};
      c.role = Role::producer;
      c.params = {{"dtype", dtype}, {"layout", layout}, {"version", cases::kind_name(versioned)}, {"device", "cpu:0"}};
      c.needs = {versioned ? "export_versioned" : "export_legacy"};
      c.body = cases::body;
      reg.add(std::move(c));
    }
  }
}
