// cases/producer_lifetime.cpp: what an export promises over time: metadata and data stay
// valid until the deleter runs, whatever else the library does meanwhile; the deleter works
// from any thread; copies are released through the same deleter
// (LAYOUT-15, DEL-05, DEL-06, DEL-11), on float32 and every rule sample, in both struct kinds.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cstring>
#include <thread>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLDataType kFloat32{kDLFloat, 32, 1};

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
  const bool versioned = ctx.param("version") == "versioned";
  // float32 3x4 as a Fortran-ordered view (strides that differ from the compact default);
  // the samples in their compact layout (sub-byte data has no other).
  const bool base = ctx.param("shape") == "3x4" && ctx.param("dtype") == "float32";
  Request r = sample_request(ctx, base ? DLPV_LAYOUT_FORTRAN : DLPV_LAYOUT_CONTIGUOUS);
  Exported e = export_or_skip(ctx, versioned, r, "LAYOUT-15");
  const DLTensor before = e.tensor();
  const size_t nd = r.shape.size();
  const int32_t ndim = static_cast<int32_t>(nd);
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
            shape_text(shape0.data(), ndim), shape_text(shape1.data(), ndim));
  if (has_strides && nd > 0) {
    const bool strides_ok = safe_read(after.strides, strides1.data(), nd * sizeof(int64_t)) && strides0 == strides1;
    ctx.check(strides_ok, "LAYOUT-15", "strides are unchanged until the deleter runs",
              shape_text(strides0.data(), ndim), shape_text(strides1.data(), ndim));
  }
}

void data_outlives_source(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
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

void foreign_thread(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r = sample_request(ctx);
  for (int i = 0; i < 8; ++i) {
    Exported e = export_or_skip(ctx, versioned, r, "DEL-06");
    DLManagedTensorVersioned* v = e.v;
    DLManagedTensor* l = e.l;
    e.v = nullptr;
    e.l = nullptr;
    ctx.phase("deleter");
    std::thread t([v, l] {
      if (v && v->deleter) v->deleter(v);
      if (l && l->deleter) l->deleter(l);
    });
    t.join();
  }
  ctx.check(true, "DEL-06", "8 deleters ran on threads other than the exporting one");
}

void frees_copy(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  if (ctx.param("shape") == "3x4" && ctx.param("dtype") == "float32")
    r = Request(kFloat32, {4, 4}, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  { Exported first = export_or_skip(ctx, true, r, "DEL-11"); }
  constexpr int kCycles = 4000;
  int failures = 0;  // a refused copy is a skip above; later refusals only shorten the loop
  const long long growth = export_delete_growth(ctx, true, r, kCycles, &failures);
  ctx.check(growth < 64 * 1024, "DEL-11",
            fmt::format("heap growth over {} copy=True export/delete cycles (the copy is released "
                        "through the same deleter)", kCycles),
            "< 64 KiB", fmt::format("{} bytes", growth));
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(producer_lifetime) {
  using namespace dlpv;
  auto rule = [&](const char* id, const char* title, const char* req, std::vector<bool> kinds,
                  void (*fn)(CaseContext&), bool about_data = false) {
    CaseInfo c;
    c.id = id;
    c.title = title;
    c.requirements = {req};
    c.role = Role::producer;
    if (std::string(id) == "producer.deleter.frees_copy") c.needs = {"copy_keyword"};
    c.body = fn;
    cases::add_rule_cases(reg, c, kinds, about_data);
  };
  rule("producer.lifetime.metadata_stable", "shape and strides stay unchanged until the deleter runs", "LAYOUT-15",
       {true, false}, cases::metadata_stable);
  rule("producer.lifetime.data_outlives_source", "data stays valid until the deleter runs, whatever the library does meanwhile",
       "DEL-05", {true, false}, cases::data_outlives_source, true);
  rule("producer.deleter.foreign_thread", "the deleter may run on another thread", "DEL-06", {true, false},
       cases::foreign_thread);
  rule("producer.deleter.frees_copy", "a copy=True export's memory is released through its deleter", "DEL-11",
       {true}, cases::frees_copy);
}
