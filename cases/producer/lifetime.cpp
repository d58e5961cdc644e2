// cases/producer/lifetime.cpp: producer.lifetime.*: what an export promises over time: metadata
// and data stay valid until the deleter runs, whatever else the library does meanwhile
// (LAYOUT-15, DEL-05), on float32 and every rule sample, in both struct kinds.
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include <cstring>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

// Churn: exports and deletes of other shapes of the same element type (allocations of
// similar sizes), so memory the first export no longer owns is reused and overwritten with
// other values.
void churn(CaseContext& ctx, bool versioned, DLDataType dtype) {
  for (int i = 0; i < 64; ++i) {
    Request other(dtype, {2 + i % 3, 5}, DLPV_LAYOUT_CONTIGUOUS);
    DLManagedTensorVersioned* v = nullptr;
    DLManagedTensor* l = nullptr;
    if ((versioned ? ctx.subject().export_versioned(other.req, &v)
                   : ctx.subject().export_legacy(other.req, &l)) != DLPV_OK)
      continue;
    if (v && v->deleter) v->deleter(v);
    if (l && l->deleter) l->deleter(l);
  }
}

void metadata_stable(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  // float32 3x4 as a Fortran-ordered view (strides that differ from the compact default);
  // the samples in their compact layout (sub-byte data has no other).
  const bool base = plain_float32_3x4(ctx);
  Request r = sample_request(ctx, base ? DLPV_LAYOUT_FORTRAN : DLPV_LAYOUT_CONTIGUOUS);
  Exported e = export_or_skip(ctx, versioned, r, "LAYOUT-15");
  const DLTensor before = e.tensor();
  const size_t nd = r.shape.size();
  std::vector<int64_t> shape0(nd), strides0(nd);
  safe_read(before.shape, shape0.data(), nd * sizeof(int64_t));
  const bool has_strides = before.strides && safe_read(before.strides, strides0.data(), nd * sizeof(int64_t));
  ctx.phase("export");
  churn(ctx, versioned, r.req.dtype);
  ctx.phase("inspect");
  const DLTensor& after = e.tensor();
  std::vector<int64_t> shape1(nd, -1), strides1(nd, -1);
  const bool shape_ok = (nd == 0 || safe_read(after.shape, shape1.data(), nd * sizeof(int64_t))) && shape0 == shape1;
  ctx.check(after.shape == before.shape && after.ndim == before.ndim && shape_ok, "LAYOUT-15",
            "shape is unchanged until the deleter runs (64 other exports made and deleted meanwhile)",
            shape_text(shape0), shape_text(shape1));
  if (has_strides && nd > 0) {
    const bool strides_ok = safe_read(after.strides, strides1.data(), nd * sizeof(int64_t)) && strides0 == strides1;
    ctx.check(strides_ok, "LAYOUT-15", "strides are unchanged until the deleter runs",
              shape_text(strides0), shape_text(strides1));
  }
}

DLPV_CASES {
  Declare("producer.lifetime.metadata_stable", "shape and strides stay unchanged until the deleter runs")
      .must({"LAYOUT-15"}).role(Role::producer)
      .per_kind(kBothKinds).per_sample()
      .proven_by({"shared_shape", "export_segfault"})  // 0-d: only a crash shows
      .run(metadata_stable);
}

void data_outlives_source(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, versioned, r, "DEL-05");
  ctx.phase("export");
  churn(ctx, versioned, r.req.dtype);
  ctx.phase("inspect");
  std::vector<uint8_t> got;
  std::string why;
  if (!ctx.check(gather_export(e, got, why), "DEL-05",
                 "the data of a live export stays readable", "readable", why))
    return;
  const std::string diff = describe_mismatch(r.req.dtype, expected_bytes(r.req.dtype, r.shape, 0), got);
  ctx.check(diff.empty(), "DEL-05",
            "the data stays valid until the deleter runs, even after the library moved on to "
            "64 other exports", "the reference pattern", diff);
}

DLPV_CASES {
  Declare("producer.lifetime.data_outlives_source",
          "data stays valid until the deleter runs, whatever the library does meanwhile")
      .must({"DEL-05"}).role(Role::producer)
      .per_kind(kBothKinds).per_sample(/*about_data=*/true)
      .proven_by({"data_dies_with_source"})
      .run(data_outlives_source);
}

}  // namespace
}  // namespace dlpv::cases
