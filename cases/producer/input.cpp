// cases/producer/input.cpp: producer.input.*: the exports a plugin really makes, not float32
// 3x4 on the loading thread. One declared input space, covered pairwise (every pair of values
// of two axes meets in at least one case; the ids name the values; --explore draws more):
//   dtype   float32, int16, uint8, float64, bool, complex64, bfloat16
//   layout  contiguous, fortran, strided, offset (byte_offset), reversed (a negative stride),
//           broadcast (a zero stride)
//   size    scalar (0-d), small (2x3x4), k (32x64: 2,048 elements), m (16x16x64x64: 1 Mi, rank 4)
//   thread  the loading thread, or another thread (the export is made there)
//   repeat  once, or again (two exports of the same request alive at once)
//   struct  versioned or legacy
// Every export is inspected as producer.tensor.* inspects one (inspect_export: dtype, shape,
// strides, device, the values read through them, IS_COPIED for a copy). A clean refusal is a
// skip that names the request (producer.tensor.* judges which dtypes and layouts a producer
// must make).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>


#include "support/helpers.hpp"
#include "support/input_space.hpp"

namespace dlpv::cases {
namespace {


void producer_input(CaseContext& ctx) {
  const auto& p = ctx.info().params;
  const bool versioned = ctx.versioned(), other = p.at("thread") == "other";
  const Request r(ctx.dtype(), input_space::dims_of(p.at("size")), ctx.layout());
  const int count = p.at("repeat") == "again" ? 2 : 1;
  std::vector<Exported> exports;
  ctx.phase("export");
  auto make = [&] {
    for (int i = 0; i < count; ++i) exports.push_back(export_or_skip(ctx, versioned, r, "LAYOUT-07"));
  };
  if (other) input_space::run_elsewhere(make);  // a skip or a harness error there is thrown here
  else make();
  for (const Exported& e : exports) inspect_export(ctx, e, r, versioned);
  ctx.phase("deleter");
  for (Exported& e : exports) e.release();
}

DLPV_CASES {
  Declare("producer.input", "{struct} export of a {dtype} {layout} {size} array ({thread} thread, {repeat}) "
          "describes its values")
      .role(Role::producer).device(kCpu0)
      .combine("dtype", input_space::kDtypes).combine("layout", input_space::kLayouts)
      .combine("size", input_space::kSizes).combine("thread", input_space::kThreads)
      .combine("repeat", input_space::kRepeats)
      .combine("struct", {"versioned", "legacy"},
               [](Declare& d, const std::string& k) {
                 const StructKind kind = k == "versioned" ? StructKind::versioned : StructKind::legacy;
                 d.kind(kind).also_needs(export_need(kind));
               })
      .pairwise()
      .each([](Declare& d) {
        const CaseParams& v = d.info().values;
        d.must(export_requirements(*v.dtype, "3x4", *v.layout, v.kind == StructKind::versioned));
      })
      .only_for({"plugin"})  // Python packages: python.input.* (the same space through their own protocol)
      .proven_by({"export_rank4_strides_swapped", "export_thread_affine", "strides_in_bytes", "large_fill_compact",
                  "lanes_zero"})
      .run(producer_input);
}

}  // namespace
}  // namespace dlpv::cases
