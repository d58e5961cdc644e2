// harness/include/dlpack_validate/declare.hpp: the one way a case is declared. A case file
// writes its body, then right under it a DLPV_CASES block that declares the case (or its
// family, over named axes) with a Declare chain:
//
//   void body(CaseContext& ctx) { ... ctx.versioned() ... ctx.dtype() ... }
//   DLPV_CASES {
//     Declare("consumer.layout", "{kind} import of a {layout} float32 tensor reads back right")
//         .must({"LAYOUT-01", "DEL-02"}).role(Role::consumer).dtype("float32").device(kCpu0)
//         .combine("layout", {"fortran", "strided"}).combine("kind", {"versioned", "legacy"})
//         .needs({need::read_array, need::release_array}).proven_by({"ignore_strides"})
//         .run(body);
//   }
//
// Each axis multiplies the family: one case per combination, its id the base id plus one
// segment per axis in the order combined, the struct kind last (consumer.layout.fortran.legacy).
// The title's {axis} placeholders ({kind}, {dtype}, {layout}, {shape}, {device} or any label
// axis) are filled per case. The struct-kind axis adds the capability its role needs
// (import_<kind> for consumers, export_<kind> otherwise) in front of the declared needs.
// Parameters are values (struct kind, dtype, layout, device); the record's text parameters are
// rendered from them, so reports and baselines see the same strings as before. proven_by names
// the fixtures (reference-plugin mutants, fake-array variants, hostile libraries) whose rows in
// tests/proofs/*.tsv must break the case; e2e.every_case_proven and python.every_case_proven
// (tests/e2e/check_proofs.py) check each claim against them.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>

#include <dlpack/dlpack.h>

#include <array>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dlpv {

/// Named shapes of the catalogue: "3x4" (the default), "scalar" (0-d), "empty" (0, 3),
/// "ones" (1, 1, 3), "one" (1,), "ndim3" (2, 3, 4), "ndim32" (32 dimensions, 8 elements),
/// "large" (1024, 1024: 1 Mi elements).
std::vector<int64_t> shape_named(const std::string& name);
/// The same catalogue, nullopt for a name it does not hold.
std::optional<std::vector<int64_t>> catalogue_shape(const std::string& name);

/// A tensor a per-tensor rule is tried on (Declare::per_sample): the id segment, its dtype and
/// catalogue shape, and whether it has an element to read.
struct Sample {
  const char* name;
  const char* dtype;
  const char* shape;
  bool has_data;
};
/// 0-d, empty, size-1, ndim 3; byte-sized, bool, complex, fp8, sub-byte.
const std::vector<Sample>& rule_samples();

/// Both struct kinds, versioned first (the order families are declared in).
/// (constexpr: declarations run from static initialisers of other files.)
inline constexpr std::array<StructKind, 2> kBothKinds{StructKind::versioned, StructKind::legacy};

/// The capabilities a case can need (subject.hpp's kCapabilities), by name: a misspelt need is
/// a compile error, not a case that skips forever.
namespace need {
inline constexpr const char* export_versioned = "export_versioned";
inline constexpr const char* export_legacy = "export_legacy";
inline constexpr const char* import_versioned = "import_versioned";
inline constexpr const char* import_legacy = "import_legacy";
inline constexpr const char* read_array = "read_array";
inline constexpr const char* is_writable = "is_writable";
inline constexpr const char* release_array = "release_array";
inline constexpr const char* exchange_api = "exchange_api";
inline constexpr const char* copy_keyword = "copy_keyword";
/// Python: the package's arrays have a __dlpack__ method (a producer at all).
inline constexpr const char* producer_protocol = "producer_protocol";
inline constexpr const char* consumer_protocol = "consumer_protocol";
inline constexpr const char* cuda_driver = "cuda_driver";
}  // namespace need

/// The capability a case needs to import (export) a struct of kind k: import_versioned ...
const char* import_need(StructKind k);
const char* export_need(StructKind k);

/// A device parameter: the device and the text the record shows for it.
struct CaseDevice {
  DLDevice device;
  const char* label;
};
inline constexpr CaseDevice kCpu0{{kDLCPU, 0}, "cpu:0"};

/// Builds one case record (or, with per_kind / per_sample, a family of them) and adds it to
/// the registry when run() is given the body.
class Declare {
 public:
  Declare(std::string id, std::string title, const char* file = __builtin_FILE(), int line = __builtin_LINE());

  Declare& title(std::string title);  ///< replaces the title (an axis value adding words)

  /// Severity and requirement ids (the first one decides the case's area).
  Declare& must(std::vector<std::string> requirements);
  Declare& should(std::vector<std::string> requirements);
  Declare& may(std::vector<std::string> requirements);
  Declare& level(Severity severity, std::vector<std::string> requirements);  ///< from a table
  Declare& role(Role role);
  /// A Python-protocol case: role python_protocol, only for Python subjects, device cpu:0.
  Declare& python();

  Declare& kind(StructKind kind);
  Declare& versioned(bool versioned) {
    return kind(versioned ? StructKind::versioned : StructKind::legacy);
  }
  Declare& dtype(DLDataType dtype);
  /// By catalogue name ("float32", "float8_e4m3fn"): an unknown name stops the program at start.
  Declare& dtype(const std::string& name);
  Declare& layout(uint32_t layout);  ///< DLPV_LAYOUT_*
  Declare& device(CaseDevice device);
  Declare& device(DLDevice device);  ///< shown as device_name(): "cpu:0", "cuda:1"
  Declare& shape(std::string name);  ///< a catalogue name (shape_named)
  /// A parameter the record shows but the body does not read (the body captures its value).
  Declare& label(std::string key, std::string value);

  Declare& needs(std::vector<std::string> capabilities);
  /// One more capability after those already named (for an axis's apply hook).
  Declare& also_needs(const std::string& capability);
  Declare& only_for(std::vector<std::string> subject_kinds);
  /// The fixtures whose planted bug this case catches (names in tests/proofs/*.tsv).
  Declare& proven_by(std::vector<std::string> fixtures);

  /// A named axis: one case per value. Known axes set the parameter of that name: "kind"
  /// (versioned, legacy), "dtype" (catalogue names), "layout" (layout names; a name that is no
  /// DLPV_LAYOUT_* is shown as a label), "shape" (catalogue shapes), "sample" (a tensor named by
  /// one word: a rule_samples() name, a dtype (3x4) or a shape (float32); "" adds no segment and
  /// keeps the declared tensor). Any other axis is a label the
  /// record shows (read back by the body through CaseContext::info().params).
  Declare& combine(const std::string& axis, std::vector<std::string> values);
  /// An axis whose values also set more than their parameter: `apply(declare, value)` runs on
  /// each case's own declaration after the value is set (a severity, a device, a label).
  using AxisApply = std::function<void(Declare&, const std::string& value)>;
  Declare& combine(const std::string& axis, std::vector<std::string> values, AxisApply apply);
  /// Not every combination but a pairwise cover: every pair of values of two different axes
  /// appears in at least one case (a deterministic greedy choice, so the ids are stable).
  Declare& pairwise();
  /// pairwise(), and every triple of values of three of these (already combined) axes as well:
  /// for axes whose values act together (the keywords of one request).
  Declare& triples(std::vector<std::string> axes);
  /// An axis added to a covered family after its ids were published, so that they stay: its
  /// implicit first value "" is what every case did before (no id segment, no parameter), and
  /// the cover keeps its cases as they were and adds, for each new value, twins of some of them
  /// (the same id and the value as a last segment; " (<value> <axis>)" in the title) until the
  /// value meets every value of every other axis: python.input.producer.int16.offset.k.loading.once
  /// and its twin python.input.producer.int16.offset.k.loading.once.edge. Only after every
  /// combine(); needs pairwise().
  Declare& extend(const std::string& axis, std::vector<std::string> values, AxisApply apply = nullptr);
  /// New values of an axis already combined, added after the family's ids were published: as
  /// extend(), the cover keeps its cases and adds, for each new value, twins of some of them (the
  /// new value in place of the axis's old one, so the id's segment for that axis is the new value)
  /// until the value meets every value of every other axis as first declared:
  /// python.input.producer.uint8.contiguous.m.loading.once and its twin
  /// python.input.producer.uint8.contiguous.row.loading.once. Only after every combine(); needs
  /// pairwise().
  Declare& widen(const std::string& axis, std::vector<std::string> values);
  /// Runs on each case's own declaration once every axis is set (requirements that depend on
  /// several parameters at once).
  Declare& each(std::function<void(Declare&)> per_case);

  /// Sugar: .combine("kind", ...) over these struct kinds.
  Declare& per_kind(const std::array<StructKind, 2>& kinds);
  Declare& per_kind(std::initializer_list<StructKind> kinds);
  /// Sugar: a per-tensor rule: besides the float32 3x4 case, one per rule sample
  /// (`<id>.<sample>[.<kind>]`); `about_data` leaves out the sample with no element.
  Declare& per_sample(bool about_data = false);

  /// What the declaration holds so far (for each() and AxisApply).
  const CaseInfo& info() const { return info_; }

  /// Registers the case(s) with `body`.
  void run(CaseBody body);
  /// The record(s) run() would register, without registering them (tests).
  std::vector<CaseInfo> records(CaseBody body) const;

 private:
  struct Axis {
    std::string name;
    std::vector<std::string> values;
    AxisApply apply;
    bool extension = false;  ///< extend(): values[0] is "" (no segment)
    size_t first_new = 0;    ///< widen(): the index of the first value added after publication (0: none)
    /// The values the cover of the axes as first declared draws from (an extension's "" alone).
    size_t published() const { return extension ? 1 : first_new ? first_new : values.size(); }
  };
  void set_axis_value(const std::string& axis, const std::string& value);
  bool has_axis(const std::string& name) const;
  std::vector<std::vector<size_t>> value_picks() const;  ///< value index per axis, per case
  /// The records of these points of the axes' space (one value index per axis each).
  std::vector<CaseInfo> records_at(const std::vector<std::vector<size_t>>& picks, CaseBody body) const;
  CaseInfo info_;
  std::vector<Axis> axes_;
  std::vector<std::function<void(Declare&)>> each_;
  bool pairwise_ = false;
  std::vector<std::string> triples_;  ///< the axes covered three at a time
};

/// The covers of pairwise() and triples(): the points (one value index per axis) of the space
/// whose axes have `sizes` values, taken greedily until every tuple of values of every group of
/// axes (pairs, triples) is in one of them: each step takes the first point, in the order of the
/// full product (the last axis varies fastest), that covers the most tuples not yet covered.
namespace cover {
size_t points(const std::vector<size_t>& sizes);
/// The cover, found with a heap of gains refreshed lazily (what Declare uses).
std::vector<std::vector<size_t>> greedy(const std::vector<size_t>& sizes, const std::vector<std::vector<size_t>>& groups);
/// The same cover by a full scan of every point at every step (the unit tests' reference).
std::vector<std::vector<size_t>> greedy_plain(const std::vector<size_t>& sizes,
                                              const std::vector<std::vector<size_t>>& groups);
/// The covers are computed once per run, not once per process: greedy() keeps every cover it
/// finds (or is handed) by its space, a worker is handed its supervisor's (memo_text() in a
/// memory file at kCoversFd, worker_process.cpp) and loads them before its cases register.
/// memo_text: every cover kept, one line each ("sizes|groups\tpoints"), after a header line.
std::string memo_text();
/// Adds the covers of a memo_text(); a line that does not parse, or whose points do not fit its
/// space, is left out (that cover is then computed). Returns how many were added.
size_t memo_load(const std::string& text);
/// The variable naming the descriptor a worker reads its supervisor's covers from, and the seals
/// that descriptor carries (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE): a process
/// that inherits the variable but not the file (a child of the package's) reads nothing and
/// closes nothing.
constexpr const char* kCoversFdVar = "DLPV_COVERS_FD";
constexpr int kCoversSeals = 0x0001 | 0x0002 | 0x0004 | 0x0008;
}  // namespace cover

}  // namespace dlpv

/// A block of declarations; a file may hold several (one under each body). Each file that
/// declares cases counts once towards the build's DLPV_CASE_UNITS check. Blocks are named by
/// __COUNTER__, not __LINE__, so that case files built together as one unity source cannot
/// name two blocks alike.
#define DLPV_CASES_CAT2(a, b) a##b
#define DLPV_CASES_CAT(a, b) DLPV_CASES_CAT2(a, b)
#define DLPV_CASES DLPV_CASES_BLOCK(DLPV_CASES_CAT(dlpv_cases_block_, __COUNTER__))
#define DLPV_CASES_BLOCK(name)                                        \
  static void name();                                                 \
  namespace {                                                         \
  struct DLPV_CASES_CAT(name, _registrar) {                           \
    DLPV_CASES_CAT(name, _registrar)() {                              \
      ::dlpv::Registry::instance().unit_registered(__FILE__);         \
      name();                                                         \
    }                                                                 \
  } DLPV_CASES_CAT(name, _instance);                                  \
  }                                                                   \
  static void name()
