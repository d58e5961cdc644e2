// cases/consumer/input.cpp: consumer.input.*: the inputs a plugin's importer really meets, not
// float32 3x4 on the loading thread. One declared input space, covered pairwise (every pair of
// values of two axes meets in at least one case; the ids name the values; --explore draws more):
//   dtype   float32, int16, uint8, float64, bool, complex64, bfloat16
//   layout  contiguous, fortran, strided, offset (byte_offset), reversed (a negative stride),
//           broadcast (a zero stride)
//   size    scalar (0-d), small (2x3x4), k (32x64: 2,048 elements), m (16x16x64x64: 1 Mi, rank 4)
//   align   the data 256, 64 or 16 bytes past a 256-byte boundary, or 1 (odd)
//   thread  the loading thread, or another thread (import, read and release all happen there)
//   repeat  once, or again (a second import of the same spec while the first lives, released in
//           the order made)
//   struct  versioned or legacy
//   values  (an extension, Declare::extend: ids without it are the reference pattern's small
//           numbers) edge: each dtype's extremes and special values (plugin.h's edge pattern)
// Each import must read the tensor's values (LAYOUT-01: the data "must be interpreted" through
// shape, strides and byte_offset) and run its deleter exactly once after release (DEL-02). A
// clean refusal is the consumer's right for an optional dtype or layout (consumer.roundtrip.*
// and consumer.layout.* judge refusals): a skip that quotes it, unless the same input is taken
// on the loading thread as a first import, which makes the refusal a fault of the thread or
// the repetition.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>


#include "support/consumer_flow.hpp"
#include "support/input_space.hpp"

namespace dlpv::cases {
namespace {


// Run `f` here or on a thread of its own, and wait for it.
template <class F>
void on_thread(bool other, F&& f) {
  if (other) input_space::run_elsewhere(std::forward<F>(f));
  else f();
}

using input_space::Input;

struct Imported {
  std::unique_ptr<MadeTensor> made;
  void* array = nullptr;
  int rc = 0;
  std::string error;
};

// The bytes an imported array reads: "" when they are the tensor's, else what differs.
std::string misread(CaseContext& ctx, const Imported& im) {
  std::vector<uint8_t> got(im.made->expected().size());
  const int rc = got.empty() ? DLPV_OK : ctx.subject().read_array(im.array, got.data(), got.size());
  if (rc != DLPV_OK) return fmt::format("read_array returned {}: {}", rc, ctx.subject().last_error());
  return describe_mismatch(im.made->spec().dtype, im.made->expected(), got);
}

// One import of `in`, read back and released, on its thread: whether it reads right (nullopt:
// refused). Used to shrink a misread input to the simplest that still misreads.
std::optional<bool> reads_right(CaseContext& ctx, const Input& in, bool versioned) {
  std::optional<bool> out;
  on_thread(in.other_thread, [&] {
    Imported im;
    im.made = MadeTensor::make(in.spec(), versioned);
    if (!im.made) ctx.harness_error("could not build the test tensor");
    im.array = import_made(ctx, *im.made, versioned, &im.rc, in.rule());
    if (!im.array) return;
    out = misread(ctx, im).empty();
    ctx.subject().release_array(im.array);
  });
  return out;
}

void judge_misread(CaseContext& ctx, const Input& in, bool versioned, const std::string& diff) {
  input_space::judge_misread(ctx, in, diff,
                             [&](const Input& x) { return reads_right(ctx, x, versioned) == std::optional<bool>(false); });
}

void consumer_input(CaseContext& ctx) {
  const auto& p = ctx.info().params;
  const bool versioned = p.at("struct") == "versioned";
  const Input in{p.at("dtype"), p.at("layout"), input_space::dims_of(p.at("size")), input_space::misalign_named(p.at("align")),
                 p.at("thread") == "other", input_space::edge_values(p)};
  const int count = p.at("repeat") == "again" ? 2 : 1;
  const std::string what = in.text();
  std::vector<Imported> imports(static_cast<size_t>(count));
  std::vector<std::string> diffs(imports.size());
  ctx.phase("import", in.rule());
  // Import, read and release all on the input's thread: a consumer is used where it is called.
  on_thread(in.other_thread, [&] {
    for (Imported& im : imports) {
      im.made = MadeTensor::make(in.spec(), versioned);
      if (!im.made) ctx.harness_error("could not build the test tensor");
      im.array = import_made(ctx, *im.made, versioned, &im.rc, in.rule());
      if (!im.array) {
        im.error = ctx.subject().last_error();
        for (Imported& before : imports)
          if (before.array) ctx.subject().release_array(before.array);
        return;
      }
    }
    ctx.phase("read", in.rule());
    for (size_t i = 0; i < imports.size(); ++i) diffs[i] = misread(ctx, imports[i]);
    ctx.phase("release", "DEL-02");
    for (Imported& im : imports) {
      ctx.subject().release_array(im.array);
      await_calls([&] { return im.made->deleter_calls(); }, 1);
    }
  });
  for (size_t i = 0; i < imports.size(); ++i) {
    Imported& im = imports[i];
    if (im.array) continue;
    // Refused: the tensor is released once (DEL-08), whoever does it; the imports before it
    // were released above.
    judge_refusal_ownership(ctx, *im.made, what);
    if (in.other_thread || i > 0) {
      const std::optional<bool> alone = reads_right(ctx, in.with(in.dtype, in.layout, in.dims, in.misalign, false), versioned);
      if (alone)
        ctx.check(false, "LAYOUT-01", "the consumer imports " + what + (i > 0 ? " a second time" : "") +
                  " as it does a first import on the loading thread", imported(ctx),
                  refusal_seen(ctx, im.rc, im.error));
    }
    if (ctx.checks().empty() || ctx.checks().back().status == Status::pass) {
      // A refusal of the rule's own kind is the consumer's right (a skip); any other is a
      // refusal of the wrong kind (ERR-07; LAYOUT-11 for negative and zero strides): a warning.
      if (im.rc != DLPV_UNSUPPORTED) {
        ctx.check_as(Severity::should, false, in.rule() == "LAYOUT-11" ? "LAYOUT-11" : "ERR-07",
                     "a consumer turning down " + what + " refuses cleanly (" + clean_refusal(ctx) + ")",
                     clean_refusal(ctx), refusal_seen(ctx, im.rc, im.error));
        return;
      }
      ctx.skip(fmt::format("the consumer refused {} cleanly ({})", what, refusal_seen(ctx, im.rc, im.error)));
    }
    return;
  }
  for (size_t i = 0; i < imports.size(); ++i)
    ctx.check_as(Severity::must, imports[i].made->deleter_calls() == 1, "DEL-02",
                 fmt::format("the tensor ({}{}) is deleted exactly once after its array is released", what,
                             i ? ", the second import" : ""),
                 "1 call", fmt::format("{} call(s)", imports[i].made->deleter_calls()));
  for (const std::string& d : diffs)
    if (!d.empty()) return judge_misread(ctx, in, versioned, d);
  ctx.check(true, "LAYOUT-01", std::string("the imported array") + (count > 1 ? "s hold" : " holds") +
                                   " the tensor's elements: " + what);
}

DLPV_CASES {
  Declare("consumer.input", "{struct} import of a {dtype} {layout} {size} tensor ({align} data, {thread} thread, "
          "{repeat}) reads back right and is deleted once")
      .must({"LAYOUT-01", "LAYOUT-08", "LAYOUT-09", "LAYOUT-11", "DEL-02", "DEL-08"}).role(Role::consumer)
      .device(kCpu0)
      .combine("dtype", input_space::kDtypes).combine("layout", input_space::kLayouts)
      .combine("size", input_space::kSizes).combine("align", input_space::kAligns)
      .combine("thread", input_space::kThreads).combine("repeat", input_space::kRepeats)
      .combine("struct", {"versioned", "legacy"},
               [](Declare& d, const std::string& k) {
                 const StructKind kind = k == "versioned" ? StructKind::versioned : StructKind::legacy;
                 d.kind(kind).also_needs(import_need(kind));
               })
      .pairwise()
      .extend("values", input_space::kValues)
      .only_for({"plugin"})  // Python packages: python.input.* (the same space through their own protocol)
      .needs({need::read_array, need::release_array})
      .proven_by({"large_narrow_strides_ignored", "import_thread_affine", "shared_release", "ignore_strides",
                  "ignore_byte_offset", "align_down", "double_delete", "import_narrow_values"})
      .run(consumer_input);
}

}  // namespace
}  // namespace dlpv::cases
