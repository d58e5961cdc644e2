// cases/producer_lifetime.cpp: what an export promises over time: metadata and data stay
// valid until the deleter runs, whatever else the library does meanwhile; the deleter works
// from any thread; copies are released through the same deleter
// (LAYOUT-15, DEL-05, DEL-06, DEL-11).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cstring>
#include <thread>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLDataType kFloat32{kDLFloat, 32, 1};

// Churn: exports and deletes of other shapes, so memory the first export no longer owns is
// reused and overwritten.
void churn(CaseContext& ctx, bool versioned) {
  for (int i = 0; i < 64; ++i) {
    Request other(kFloat32, {2 + i % 3, 5}, DLPV_LAYOUT_CONTIGUOUS);
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
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_FORTRAN);
  Exported e = export_or_skip(ctx, versioned, r, "LAYOUT-15");
  const DLTensor before = e.tensor();
  int64_t shape0[2] = {}, strides0[2] = {};
  safe_read(before.shape, shape0, sizeof shape0);
  const bool has_strides = before.strides && safe_read(before.strides, strides0, sizeof strides0);
  ctx.phase("export");
  churn(ctx, versioned);
  ctx.phase("inspect");
  const DLTensor& after = e.tensor();
  int64_t shape1[2] = {-1, -1}, strides1[2] = {-1, -1};
  const bool shape_ok = safe_read(after.shape, shape1, sizeof shape1) && std::memcmp(shape0, shape1, sizeof shape0) == 0;
  ctx.check(after.shape == before.shape && shape_ok, "LAYOUT-15",
            "shape is unchanged until the deleter runs (64 other exports made and deleted meanwhile)",
            shape_text(shape0, 2), shape_text(shape1, 2));
  if (has_strides) {
    const bool strides_ok = safe_read(after.strides, strides1, sizeof strides1) &&
                            std::memcmp(strides0, strides1, sizeof strides0) == 0;
    ctx.check(strides_ok, "LAYOUT-15", "strides are unchanged until the deleter runs",
              shape_text(strides0, 2), shape_text(strides1, 2));
  }
}

void data_outlives_source(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
  Exported e = export_or_skip(ctx, versioned, r, "DEL-05");
  ctx.phase("export");
  churn(ctx, versioned);
  ctx.phase("inspect");
  std::vector<uint8_t> got;
  std::string why;
  if (!ctx.check(gather_elements(e.tensor(), got, why), "DEL-05",
                 "the data of a live export stays readable", "readable", why))
    return;
  const std::string diff = describe_mismatch(kFloat32, expected_bytes(kFloat32, r.shape, 0), got);
  ctx.check(diff.empty(), "DEL-05",
            "the data stays valid until the deleter runs, even after the library moved on to "
            "64 other exports", "the reference pattern", diff);
}

void foreign_thread(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
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
  Request r(kFloat32, {4, 4}, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
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
  auto add = [&](std::string id, std::string title, const char* req, bool versioned,
                 void (*fn)(CaseContext&)) {
    CaseInfo c;
    c.id = std::move(id);
    c.title = std::move(title);
    c.requirements = {req};
    c.role = Role::producer;
    c.params = {{"version", cases::kind_name(versioned)}, {"dtype", "float32"}};
    c.needs = {versioned ? "export_versioned" : "export_legacy"};
    c.body = fn;
    reg.add(std::move(c));
  };
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    add("producer.lifetime.metadata_stable." + kind,
        "shape and strides stay unchanged until the deleter runs", "LAYOUT-15", versioned,
        cases::metadata_stable);
    add("producer.lifetime.data_outlives_source." + kind,
        "data stays valid until the deleter runs, whatever the library does meanwhile", "DEL-05",
        versioned, cases::data_outlives_source);
    add("producer.deleter.foreign_thread." + kind, "the deleter may run on another thread",
        "DEL-06", versioned, cases::foreign_thread);
  }
  add("producer.deleter.frees_copy.versioned",
      "a copy=True export's memory is released through its deleter", "DEL-11", true, cases::frees_copy);
}
