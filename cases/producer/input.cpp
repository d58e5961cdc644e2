// cases/producer/input.cpp: producer.input.*: the exports a plugin really makes, not float32
// 3x4 on the loading thread. One declared input space, covered pairwise (every pair of values
// of two axes meets in at least one case; the ids name the values; --explore draws more):
//   dtype   float32, int16, uint8, float64, bool, complex64, bfloat16
//   layout  contiguous, fortran, strided, offset (byte_offset), reversed (a negative stride),
//           broadcast (a zero stride)
//   size    scalar (0-d), small (2x3x4), k (32x64: 2,048 elements), m (16x16x64x64: 1 Mi, rank 4),
//           row (24: rank 1)
//   request plain, copy (copy=True), no_copy (copy=False), read_only (a read-only source)
//   thread  the loading thread, or another thread (the export is made there)
//   repeat  once, or again (two exports of the same request alive at once)
//   struct  versioned or legacy
//   values  (an extension, Declare::extend: ids without it are the reference pattern's small
//           numbers) edge: DLPV_REQ_EDGE_VALUES, each dtype's extremes and special values
//           (plugin.h's edge pattern), asked only of a plugin that declares the bit
// Every export is inspected as producer.tensor.* inspects one (inspect_export: dtype, shape,
// strides, device, the values read through them, IS_COPIED for a copy), and, versioned, its
// flags as producer.flags.* judges them on float32 3x4: only defined bits (FLAG-01), IS_COPIED
// on a copy=True export (FLAG-05), clear on a copy=False one (KW-04), READ_ONLY on a read-only
// source unless copied (FLAG-02). Then export/delete cycles of the same request must not grow
// the heap (DEL-01, as producer.deleter.frees judges it). A clean refusal is a skip that names
// the request (producer.tensor.* and producer.copy.* judge what a producer must make).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <algorithm>

#include "support/helpers.hpp"
#include "support/input_space.hpp"

namespace dlpv::cases {
namespace {


// The producer's sizes: the shared ones and a rank-1 tensor (24 elements).
const std::vector<std::string> kSizes = [] {
  std::vector<std::string> s = input_space::kSizes;
  s.push_back("row");
  return s;
}();
const std::vector<std::string> kRequests{"plain", "copy", "no_copy", "read_only"};

uint32_t request_flags(const std::string& request) {
  return request == "copy" ? DLPV_REQ_COPY : request == "no_copy" ? DLPV_REQ_NO_COPY
         : request == "read_only" ? DLPV_REQ_READ_ONLY : 0u;
}

// The flags of a versioned export, for the request that made it.
void inspect_flags(CaseContext& ctx, const Exported& e, const std::string& request) {
  const uint64_t flags = e.v->flags;
  check_defined_flags(ctx, e);
  const bool copied = (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  if (request == "copy")
    ctx.check_as(Severity::must, copied, "FLAG-05", "an export made as a copy (copy=True) sets IS_COPIED",
                 "bit 1 set", fmt::format("flags = {:#x}", flags));
  else if (request == "no_copy")
    // The array API (__dlpack__, copy): False "must never copy".
    ctx.check_as(Severity::must, !copied, "KW-04", "copy=False never copies: the export does not carry IS_COPIED",
                 "bit 1 clear", fmt::format("flags = {:#x} (a copy was made)", flags));
  else if (request == "read_only" && !copied)
    // A copy is the consumer's to write (FLAG-09), so READ_ONLY binds only a view of the source.
    ctx.check_as(Severity::should, (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
                 "a read-only source array exported without a copy is marked READ_ONLY", "bit 0 set",
                 fmt::format("flags = {:#x}", flags));
}

// Export/delete cycles of `r` (leak_cycles_for, support/helpers.cpp).
int leak_cycles(const Request& r) { return leak_cycles_for(element_count(r.shape), element_bytes(r.req.dtype)); }

void producer_input(CaseContext& ctx) {
  const auto& p = ctx.info().params;
  const bool versioned = ctx.versioned(), other = p.at("thread") == "other";
  const std::string& request = p.at("request");
  const uint32_t values = input_space::edge_values(p) ? DLPV_REQ_EDGE_VALUES : 0u;
  const Request r(ctx.dtype(), input_space::dims_of(p.at("size")), ctx.layout(), request_flags(request) | values);
  const int count = p.at("repeat") == "again" ? 2 : 1;
  std::vector<Exported> exports;
  ctx.phase("export");
  auto make = [&] {
    for (int i = 0; i < count; ++i) exports.push_back(export_or_skip(ctx, versioned, r, "LAYOUT-07"));
  };
  if (other) input_space::run_elsewhere(make);  // a skip or a harness error there is thrown here
  else make();
  for (const Exported& e : exports) {
    inspect_export(ctx, e, r, versioned);
    if (versioned) inspect_flags(ctx, e, request);
  }
  ctx.phase("deleter");
  for (Exported& e : exports) e.release();
  // On the thread that exported: an exporter bound to its thread is producer.input's other
  // thread's finding, not a leak.
  // An input exported again holds two exports alive in every cycle, as the case did: a deleter
  // that frees nothing only while another export lives shows there alone.
  ctx.phase("leak");
  const int cycles = leak_cycles(r);
  auto cycle = [&] {
    judge_growth(ctx, versioned, r, cycles, "DEL-01",
                 "export/delete cycles of this request (the deleter frees data, shape/strides and the managed struct)",
                 true, std::clamp(cycles / 4, 1, 100), count);
  };
  if (other) input_space::run_elsewhere(cycle);
  else cycle();
}

DLPV_CASES {
  Declare("producer.input", "{struct} export of a {dtype} {layout} {size} array ({thread} thread, {repeat}, "
          "{request} request) describes its values and frees them")
      .role(Role::producer).device(kCpu0)
      .combine("dtype", input_space::kDtypes).combine("layout", input_space::kLayouts)
      .combine("size", kSizes).combine("thread", input_space::kThreads)
      .combine("repeat", input_space::kRepeats)
      .combine("request", kRequests,
               [](Declare& d, const std::string& q) {
                 if (q == "copy" || q == "no_copy") d.also_needs(need::copy_keyword);
               })
      .combine("struct", {"versioned", "legacy"},
               [](Declare& d, const std::string& k) {
                 const StructKind kind = k == "versioned" ? StructKind::versioned : StructKind::legacy;
                 d.kind(kind).also_needs(export_need(kind));
               })
      .pairwise()
      .extend("values", input_space::kValues)
      .each([](Declare& d) {
        const CaseParams& v = d.info().values;
        std::vector<std::string> reqs = export_requirements(*v.dtype, "3x4", *v.layout, v.kind == StructKind::versioned);
        const std::string& q = d.info().params.at("request");
        if (v.kind == StructKind::versioned) {  // (export_requirements names FLAG-01)
          if (q == "copy" && std::find(reqs.begin(), reqs.end(), "FLAG-05") == reqs.end()) reqs.push_back("FLAG-05");
          if (q == "read_only") reqs.push_back("FLAG-02");
        }
        if (q == "no_copy" && v.kind == StructKind::versioned) reqs.push_back("KW-04");
        reqs.push_back("DEL-01");
        d.must(reqs);
      })
      .only_for({"plugin"})  // Python packages: python.input.* (the same space through their own protocol)
      .proven_by({"export_rank4_strides_swapped", "export_thread_affine", "strides_in_bytes", "large_fill_compact",
                  "lanes_zero", "deleter_leaks", "copy_leaks", "undefined_flag", "no_read_only", "no_is_copied",
                  "no_copy_copied", "export_narrow_values"})
      .run(producer_input);
}

}  // namespace
}  // namespace dlpv::cases
