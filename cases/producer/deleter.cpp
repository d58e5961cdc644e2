// cases/producer/deleter.cpp: producer.deleter.*: what a producer's deleter does: it exists
// (DEL-04), frees everything (DEL-01), copies too (DEL-11), exports are independent (DEL-10),
// and it may run on any thread (DEL-06); on float32 3x4 and every rule sample.
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {


void deleter_present(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, versioned, r, "DEL-04");
  const bool present = versioned ? e.v->deleter != nullptr : e.l->deleter != nullptr;
  ctx.check(present, "DEL-04", "an exported tensor that owns memory provides a deleter",
            "non-NULL deleter", "NULL deleter");
}

DLPV_CASES {
  Declare("producer.deleter.present", "the exported tensor has a deleter")
      .should({"DEL-04"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS)
      .per_kind(kBothKinds).per_sample()
      .proven_by({"null_deleter"})
      .run(deleter_present);
}

// Export and delete many times; the heap must not grow with the number of cycles. The
// tensor is small so that a leaked managed struct weighs as much as leaked data.
void deleter_frees(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
  Request r = sample_request(ctx);
  if (plain_float32_3x4(ctx)) r = Request(kFloat32, {4, 4}, DLPV_LAYOUT_CONTIGUOUS);
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
  judge_growth(ctx, versioned, r, kCycles, "DEL-01",
               "export/delete cycles (the deleter frees data, shape/strides and the managed struct)", true);
}

DLPV_CASES {
  Declare("producer.deleter.frees", "4000 export/delete cycles do not grow the heap")
      .must({"DEL-01"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS)
      .per_kind(kBothKinds).per_sample()
      .proven_by({"deleter_leaks", "deleter_keeps_struct"})
      .run(deleter_frees);
}

// Three exports of the same request are independent: deleting them in another order
// leaves the others intact.
void independent(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
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

DLPV_CASES {
  Declare("producer.deleter.independent", "three exports of one array are independent and can be deleted in any order")
      .should({"DEL-10"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS)
      .per_kind(kBothKinds).per_sample(/*about_data=*/true)
      .proven_by({"shared_buffer"})
      .run(independent);
}

void foreign_thread(CaseContext& ctx) {
  const bool versioned = ctx.versioned();
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

DLPV_CASES {
  Declare("producer.deleter.foreign_thread", "the deleter may run on another thread")
      .must({"DEL-06"}).role(Role::producer)
      .per_kind(kBothKinds).per_sample()
      .proven_by({"deleter_thread_affine"})
      .run(foreign_thread);
}

void frees_copy(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  if (plain_float32_3x4(ctx))
    r = Request(kFloat32, {4, 4}, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  { Exported first = export_or_skip(ctx, true, r, "DEL-11"); }
  constexpr int kCycles = 4000;
  judge_growth(ctx, true, r, kCycles, "DEL-11",
               "copy=True export/delete cycles (the copy is released through the same deleter)", false);
}

DLPV_CASES {
  Declare("producer.deleter.frees_copy", "a copy=True export's memory is released through its deleter")
      .must({"DEL-11"}).role(Role::producer)
      .needs({need::copy_keyword}).per_kind({StructKind::versioned}).per_sample()
      .proven_by({"deleter_leaks", "deleter_keeps_struct"})
      .run(frees_copy);
}

}  // namespace
}  // namespace dlpv::cases
