// cases/producer_deleter.cpp: what a producer's deleter does (DEL-01, DEL-04, DEL-10), on
// float32 3x4 and every rule sample, in both struct kinds.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLDataType kFloat32{kDLFloat, 32, 1};

void deleter_present(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, versioned, r, "DEL-04");
  const bool present = versioned ? e.v->deleter != nullptr : e.l->deleter != nullptr;
  ctx.check(present, "DEL-04", "an exported tensor that owns memory provides a deleter",
            "non-NULL deleter", "NULL deleter");
}

// Export and delete many times; the heap must not grow with the number of cycles. The
// tensor is small so that a leaked managed struct weighs as much as leaked data.
void deleter_frees(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r = sample_request(ctx);
  if (ctx.param("shape") == "3x4" && ctx.param("dtype") == "float32") r = Request(kFloat32, {4, 4}, DLPV_LAYOUT_CONTIGUOUS);
  constexpr int kCycles = 4000;
  {
    Exported first = export_or_skip(ctx, versioned, r, "DEL-01");  // refusals become skips here
    const bool has_deleter = versioned ? first.v->deleter != nullptr : first.l->deleter != nullptr;
    if (!has_deleter) {
      ctx.check(false, "DEL-01", "the deleter releases the tensor; without one, nothing can",
                "non-NULL deleter", "NULL deleter: every export leaks");
      return;
    }
  }
  int failures = 0;
  const long long growth = export_delete_growth(ctx, versioned, r, kCycles, &failures);
  if (failures)
    ctx.harness_error(fmt::format("{} exports failed during the leak loop: {}", failures,
                                  ctx.subject().last_error()));
  ctx.check(growth < 64 * 1024, "DEL-01",
            fmt::format("heap growth over {} export/delete cycles (the deleter frees data, "
                        "shape/strides and the managed struct)", kCycles),
            "< 64 KiB", fmt::format("{} bytes ({:.1f} bytes per cycle)", growth,
                                    static_cast<double>(growth) / kCycles));
}

// Three exports of the same request are independent: deleting them in another order
// leaves the others intact.
void independent(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r = sample_request(ctx);
  const DLDataType dtype = r.req.dtype;
  std::vector<Exported> all;
  for (int i = 0; i < 3; ++i) all.push_back(export_or_skip(ctx, versioned, r, "DEL-10"));
  auto managed = [&](size_t i) { return versioned ? static_cast<void*>(all[i].v) : static_cast<void*>(all[i].l); };
  ctx.check(managed(0) != managed(1) && managed(1) != managed(2) && managed(0) != managed(2), "DEL-10",
            "each export returns its own managed struct", "3 distinct pointers", "a pointer repeats");
  const std::vector<uint8_t> want = expected_bytes(dtype, r.shape, DLPV_LAYOUT_CONTIGUOUS);
  for (int victim : {1, 0}) {
    ctx.phase("deleter");
    all[static_cast<size_t>(victim)].release();
    ctx.phase("inspect");
    std::vector<uint8_t> got;
    std::string why;
    if (!gather_export(all[2], got, why)) {
      ctx.check(false, "DEL-10", "a live export stays readable after another export's deleter ran",
                "readable", why);
      return;
    }
    const std::string diff = describe_mismatch(dtype, want, got);
    ctx.check(diff.empty(), "DEL-10",
              fmt::format("export 2 keeps its values after export {}'s deleter ran", victim),
              "the reference pattern", diff);
  }
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(producer_deleter) {
  using namespace dlpv;
  auto rule = [&](const char* id, const char* title, const char* req, Severity sev, void (*fn)(CaseContext&),
                  bool about_data = false) {
    CaseInfo c;
    c.id = id;
    c.title = title;
    c.requirements = {req};
    c.severity = sev;
    c.role = Role::producer;
    c.params = {{"layout", "contiguous"}};
    c.body = fn;
    cases::add_rule_cases(reg, c, {true, false}, about_data);
  };
  rule("producer.deleter.present", "the exported tensor has a deleter", "DEL-04", Severity::should,
       cases::deleter_present);
  rule("producer.deleter.frees", "4000 export/delete cycles do not grow the heap", "DEL-01", Severity::must,
       cases::deleter_frees);
  rule("producer.deleter.independent", "three exports of one array are independent and can be deleted in any order",
       "DEL-10", Severity::should, cases::independent, true);
}
