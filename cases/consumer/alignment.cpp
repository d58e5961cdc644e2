// cases/consumer/alignment.cpp: consumer.alignment.*: data at addresses with no alignment
// beyond the element's is read right or refused, never misread (LAYOUT-09).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

// LAYOUT-09: the header's "aligned to 256 bytes" is disclaimed in the same comment (libraries
// do not honour it; byte_offset is not to be used for it), so a consumer may rely on no
// alignment beyond the element's: data anywhere must be read right or refused, never misread
// and never a crash (the reads of the Python adapters go through the library's own kernels).
void misaligned(CaseContext& ctx, size_t misalign) {
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  spec.misalign = misalign;
  const std::string where = misalign == 1 ? "at an odd address" : fmt::format("{} bytes past a 64-byte boundary", misalign);
  consumer_roundtrip(ctx, spec, ctx.versioned(), "LAYOUT-09", Refusal::allowed,
                     with_article(dtype_name(spec.dtype)) + " tensor whose data sits " + where);
}

DLPV_CASES {
  // Odd addresses (1-byte and 2-byte elements), and float32 data 16 bytes past a 64-byte
  // boundary: where glibc's malloc puts NumPy's data.
  const struct {
    const char* name;
    const char* dtype;
    size_t misalign;
    const char* where;
  } placements[] = {{"odd", "uint8", 1, "at an odd address"},
                    {"odd", "int16", 1, "at an odd address"},
                    {"malloc16", "float32", 16, "16 bytes past a 64-byte boundary"}};
  for (const auto& p : placements) {
    const size_t misalign = p.misalign;
    Declare(fmt::format("consumer.alignment.{}.{}", p.name, p.dtype),
            fmt::format("{} data {} is read right or refused, never misread", p.dtype, p.where))
        .must({"LAYOUT-09", "DEL-02"}).role(Role::consumer)
        .dtype(p.dtype).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0).label("misalign", std::to_string(misalign))
        .needs({need::read_array, need::release_array}).per_kind(kBothKinds)
        .proven_by({"align_down"})
        .run([misalign](CaseContext& ctx) { misaligned(ctx, misalign); });
  }
}

}  // namespace
}  // namespace dlpv::cases
