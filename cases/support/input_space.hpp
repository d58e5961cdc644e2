// cases/support/input_space.hpp: the input space the input families share (consumer.input.*,
// producer.input.*, python.input.*): its axes' values, in order (the first value of an axis is
// its simplest, which --explore's shrink relies on), the shapes of the size axis, and running a
// step on another thread.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/tensor.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dlpv::input_space {

inline const std::vector<std::string> kDtypes{"float32", "int16", "uint8", "float64", "bool", "complex64", "bfloat16"};
inline const std::vector<std::string> kLayouts{"contiguous", "fortran", "strided", "offset", "reversed", "broadcast"};
inline const std::vector<std::string> kSizes{"scalar", "small", "k", "m"};
inline const std::vector<std::string> kAligns{"a256", "a64", "a16", "odd"};
inline const std::vector<std::string> kThreads{"loading", "other"};
inline const std::vector<std::string> kRepeats{"once", "again"};
/// The values axis, added after the ids were published (Declare::extend): its implicit first
/// value is the small numbers of the reference pattern; "edge" is the edge pattern (plugin.h:
/// each dtype's extremes, infinities, NaN, -0 and subnormals, the high bits set).
inline const std::vector<std::string> kValues{"edge"};

/// Whether a case of an input family asks for the edge pattern (its values axis, which sets no
/// parameter on the cases that keep the small numbers).
template <class Params>
bool edge_values(const Params& p) {
  const auto it = p.find("values");
  return it != p.end() && it->second == "edge";
}

/// Bytes past a 256-byte boundary for an alignment value: a256 0, a64 64, a16 16, a4 4, odd 1.
inline size_t misalign_named(const std::string& align) {
  return align == "a256" ? 0 : align == "a64" ? 64 : align == "a16" ? 16 : align == "a4" ? 4 : 1;
}

/// The shape of a size value: scalar (0-d), small (2x3x4), k (32x64: 2,048 elements), m
/// (16x16x64x64: 1 Mi elements, rank 4); row (24: rank 1, producer.input's only).
inline std::vector<int64_t> dims_of(const std::string& size) {
  if (size == "scalar") return {};
  if (size == "row") return {24};
  if (size == "small") return {2, 3, 4};
  if (size == "k") return {32, 64};
  return {16, 16, 64, 64};
}

/// One point of a consumer's input space.
struct Input {
  std::string dtype, layout;
  std::vector<int64_t> dims;
  size_t misalign = 0;
  bool other_thread = false;
  bool edge = false;  ///< the edge pattern (the values axis) instead of the small numbers
  /// The same input with other parts (judge_misread's simpler inputs keep the values).
  Input with(std::string d, std::string l, std::vector<int64_t> s, size_t m, bool other) const {
    return Input{std::move(d), std::move(l), std::move(s), m, other, edge};
  }
  /// The layout that matters: a 0-d tensor has no strides to get wrong.
  std::string effective_layout() const { return dims.empty() && layout != "offset" ? "contiguous" : layout; }
  std::string text() const {
    return with_article(fmt::format("{} {} tensor of {} elements{}, data {} bytes past a 256-byte boundary{}", dtype,
                                    layout, element_count(dims), edge ? " holding edge values" : "", misalign,
                                    other_thread ? ", imported on another thread" : ""));
  }
  /// `base` (its device, its deleter) with this input's dtype, shape, layout and alignment.
  MadeSpec spec(MadeSpec base = {}) const {
    base.dtype = *dtype_from_name(dtype);
    base.shape = dims;
    if (layout == "offset") base.extra_byte_offset = 64;
    else if (auto l = layout_from_name(layout)) base.layout = *l;
    base.misalign = misalign;
    base.values = edge ? DLPV_VALUES_EDGE : DLPV_VALUES_PLAIN;
    return base;
  }
  /// The rule the input's unusual part puts to the test: a negative or zero stride LAYOUT-11
  /// (read right "or refused", a SHOULD), byte_offset LAYOUT-08, data off dlpack.h's 256 bytes
  /// LAYOUT-09, anything else LAYOUT-01. A death during the import is charged to it.
  std::string rule() const {
    const std::string l = effective_layout();
    if (l == "reversed" || l == "broadcast") return "LAYOUT-11";
    if (l == "offset") return "LAYOUT-08";
    return misalign ? "LAYOUT-09" : "LAYOUT-01";
  }
};

/// A misread input is shrunk to the simplest input that still misreads (`misreads` imports one
/// and says whether it read wrong), and the verdict goes to the rule that input tests: the dtype
/// alone (a compact 2x3x4 tensor, aligned, the loading thread), the layout alone, the alignment
/// alone, or the loading thread; else the combination.
inline void judge_misread(CaseContext& ctx, const Input& in, const std::string& diff,
                          const std::function<bool(const Input&)>& misreads) {
  ctx.phase("shrink");
  std::string req = "LAYOUT-01", why;
  const Input layout_alone = in.with(in.dtype, in.layout, in.dims, 0, false);
  const std::string values = in.edge ? " holding edge values" : "";
  if (misreads(in.with(in.dtype, "contiguous", {2, 3, 4}, 0, false))) {
    why = "a compact aligned " + in.dtype + " 2x3x4 tensor" + values + " is misread too: the element type" +
          (in.edge ? "'s edge values" : "") + " alone";
  } else if (in.effective_layout() != "contiguous" && misreads(layout_alone)) {
    req = layout_alone.rule();
    why = "the " + in.layout + " layout alone (aligned data, the loading thread) is misread";
  } else if (in.misalign != 0 && misreads(in.with(in.dtype, "contiguous", in.dims, in.misalign, false))) {
    req = "LAYOUT-09";
    why = fmt::format("compact data {} bytes past a 256-byte boundary alone is misread", in.misalign);
  } else if (in.other_thread && !misreads(in.with(in.dtype, in.layout, in.dims, in.misalign, false))) {
    why = "only on another thread: the same input imported on the loading thread reads right";
  } else {
    why = "only this combination: no simpler input (dtype, layout or alignment alone) is misread";
  }
  ctx.phase("judge");
  const std::string msg = "the imported array holds the tensor's elements: " + in.text() + " (shrunk: " + why + ")";
  // Wrong elements are a MUST failure whatever the rule's strength for refusing (LAYOUT-11:
  // "imports them with the right values or raises BufferError, and never misreads them").
  ctx.check_as(Severity::must, false, req, msg, "the pattern", diff);
}

/// Run `f` on a thread of its own and wait for it; what it throws (a skip, a harness error, a
/// Python error) is thrown here.
template <class F>
void run_elsewhere(F&& f) {
  std::exception_ptr failed;
  std::thread t([&] {
    try {
      f();
    } catch (...) {
      failed = std::current_exception();
    }
  });
  t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace dlpv::input_space
