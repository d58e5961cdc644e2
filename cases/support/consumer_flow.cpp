// cases/support/consumer_flow.cpp
// SPDX-License-Identifier: Apache-2.0
#include "consumer_flow.hpp"

#include <fmt/format.h>

namespace dlpv::cases {

// A refusal is clean only as the exception the rule names: BufferError from a Python package
// (DLPV_UNSUPPORTED through its subject), DLPV_UNSUPPORTED from a plugin. ERR-07: "When the
// consumer turns a tensor down for its device, dtype, lanes, ndim or version, the exception is
// BufferError"; LAYOUT-11 the same for negative and zero strides ("or raises BufferError"). Any
// other refusal is a refusal all the same, of the wrong kind: a warning on every path.
void judge_refusal_kind(CaseContext& ctx, int rc, const std::string& requirement, const std::string& what) {
  if (rc == DLPV_OK) return;
  const std::string rule = requirement == "LAYOUT-11" ? "LAYOUT-11" : "ERR-07";
  ctx.check_as(Severity::should, rc == DLPV_UNSUPPORTED, rule,
               "a consumer turning down " + what + " refuses cleanly (" + clean_refusal(ctx) + ")",
               clean_refusal(ctx), refusal_seen(ctx, rc, ctx.subject().last_error()));
}

namespace {
// An import that reported success and gave no array, in the subject's words.
std::string no_array(CaseContext& ctx) {
  return speaks_python(ctx) ? "the import succeeded but gave no array" : "import returned DLPV_OK but no array";
}

// Import `made` and release it (DEL-02 judged): "" when imported, else the refusal ("RC:
// last_error"), its ownership judged (DEL-08).
std::string import_or_refusal(CaseContext& ctx, MadeTensor& made, bool versioned, const std::string& what) {
  int rc = 0;
  void* array = import_made(ctx, made, versioned, &rc);
  if (!array) {
    const std::string why = refusal_seen(ctx, rc, ctx.subject().last_error());
    judge_refusal_ownership(ctx, made, what);
    return why;
  }
  release_expecting_one_delete(ctx, array, made);
  return {};
}
}  // namespace

std::string refuses_plain_scalar(CaseContext& ctx, bool versioned) {
  MadeSpec plain;
  plain.shape = {};
  auto made = MadeTensor::make(plain, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  // A 0-d tensor's shape and strides have no entries: MadeTensor's empty vectors give NULL
  // pointers, so point both at a slot of static storage (nothing is read through them).
  static int64_t slot[1] = {0};
  DLTensor& t = versioned ? made->versioned()->dl_tensor : made->legacy()->dl_tensor;
  t.shape = slot;
  t.strides = slot;
  return import_or_refusal(ctx, *made, versioned, "a 0-d float32 tensor with its shape and strides set");
}

std::string refuses_plain_form(CaseContext& ctx, const MadeSpec& spec, bool versioned) {
  MadeSpec plain = spec;
  plain.layout = DLPV_LAYOUT_CONTIGUOUS;
  plain.extra_byte_offset = 0;
  plain.misalign = 0;
  plain.deleter = DeleterKind::counting;
  auto made = MadeTensor::make(plain, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  return import_or_refusal(ctx, *made, versioned, "the plain (compact, no byte_offset) form of the tensor");
}

void consumer_roundtrip(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                        const char* requirement, Refusal refusal, const std::string& what) {
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  const bool counted = spec.deleter == DeleterKind::counting;
  int rc = 0;
  void* array = import_made(ctx, *made, versioned, &rc);
  if (!array) {
    judge_refusal_ownership(ctx, *made, what);
    if (rc == DLPV_OK)
      ctx.check(false, requirement, no_array(ctx), "an array", "none");
    else if (refusal == Refusal::skips && rc == DLPV_UNSUPPORTED)
      ctx.skip(fmt::format("the consumer refused {} cleanly ({})", what, refusal_seen(ctx, rc, ctx.subject().last_error())));
    else if (refusal == Refusal::skips)
      judge_refusal_kind(ctx, rc, requirement, what);
    else if (refusal == Refusal::fails)
      ctx.check(false, requirement, "the consumer must import " + what,
                imported(ctx), refusal_seen(ctx, rc, ctx.subject().last_error()));
    else if (refusal == Refusal::warns) {
      const std::string refused = refusal_seen(ctx, rc, ctx.subject().last_error());
      // Only a byte_offset has a plain form to compare with (a 0-d tensor's refusal is its own).
      if (const std::string plain = spec.extra_byte_offset ? refuses_plain_form(ctx, spec, versioned) : std::string();
          !plain.empty())
        ctx.skip(fmt::format("the consumer refused {} ({}), and refuses its plain form too (compact, no "
                             "byte_offset: {}): the refusal is not about what this case tests",
                             what, refused, plain));
      ctx.check_as(Severity::should, false, requirement, "the consumer should import " + what, imported(ctx), refused);
    }
    else if (rc == DLPV_UNSUPPORTED)
      ctx.check(true, requirement, fmt::format("the consumer refused {} cleanly ({})", what, clean_refusal(ctx)));
    else
      judge_refusal_kind(ctx, rc, requirement, what);
    return;
  }
  const int at_import = counted ? released_at_import(ctx, *made) : 0;
  read_back_matches(ctx, array, made->expected(), spec.dtype, requirement,
                    "the imported array holds the tensor's elements: " + what, at_import > 0);
  if (counted && at_import == 0)
    ctx.check_as(Severity::must, made->deleter_calls() == 0, "DEL-02",
              "the deleter is not called while the imported array is alive", "0 calls after read",
              fmt::format("{} call(s) after read_array", made->deleter_calls()));
  ctx.phase("release");
  ctx.subject().release_array(array);
  if (counted) await_calls([&] { return made->deleter_calls(); }, 1);
  if (counted)
    ctx.check_as(Severity::must, made->deleter_calls() == 1, "DEL-02",
              "once the imported array is released, the deleter has run exactly once", "1 call",
              fmt::format("{} call(s)", made->deleter_calls()));
  else
    ctx.check(true, "DEL-03", "import and release of a tensor whose deleter is NULL");
}

int released_at_import(CaseContext& ctx, const MadeTensor& made) {
  const int calls = made.deleter_calls();
  if (calls == 0) return 0;
  // dlpack.h: "When the borrowing framework doesn't need the tensor, it should call the
  // deleter": a consumer that copied the data during import may release it at once. The
  // tensor's memory is poisoned by then, so a later read-back tells a copy from a dangling view.
  ctx.check_as(Severity::must, calls == 1, "DEL-02", "a consumer that releases the tensor at import calls its "
               "deleter once", "1 call", fmt::format("{} call(s) during import", calls));
  ctx.note("the consumer released the tensor during import (it copied the data: lawful)");
  return calls;
}

void release_expecting_one_delete(CaseContext& ctx, void* array, const MadeTensor& made) {
  ctx.phase("release");
  ctx.subject().release_array(array);
  await_calls([&] { return made.deleter_calls(); }, 1);
  ctx.check_as(Severity::must, made.deleter_calls() == 1, "DEL-02",
               "once the imported array is released, the deleter has run exactly once", "1 call",
               fmt::format("{} call(s)", made.deleter_calls()));
}

void judge_refusal_ownership(CaseContext& ctx, MadeTensor& made, const std::string& what) {
  const int by_consumer = made.deleter_calls();
  ctx.phase("release", "DEL-08");
  const bool versioned = made.versioned() != nullptr;
  if (by_consumer == 0 && made.spec().deleter == DeleterKind::counting)
    call_deleter(versioned ? static_cast<void*>(made.versioned()) : static_cast<void*>(made.legacy()), versioned);
  if (made.spec().deleter != DeleterKind::counting) return;
  const int total = made.deleter_calls();
  ctx.check_as(Severity::must, total == 1, "DEL-08",
               "a refused tensor (" + what + ") is released exactly once: the refusing consumer calls its deleter "
               "once or leaves that to the caller",
               "1 deleter call in all",
               by_consumer == 0 ? fmt::format("0 by the consumer + 1 by the caller's cleanup = {}", total)
                                : fmt::format("{} by the consumer", by_consumer));
}

void consumer_must_refuse(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                          const char* requirement, const std::string& what) {
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  int rc = 0;
  void* array = import_made(ctx, *made, versioned, &rc);
  if (!array) {
    const std::string error = ctx.subject().last_error();
    judge_refusal_ownership(ctx, *made, what);
    ctx.check(rc != DLPV_OK, requirement, no_array(ctx), "a refusal", speaks_python(ctx) ? "success" : "DLPV_OK");
    ctx.check(true, requirement, fmt::format("refused {} ({})", what, refusal_seen(ctx, rc, error)));
    judge_refusal_kind(ctx, rc, requirement, what);
    return;
  }
  ctx.check(false, requirement, "the consumer must refuse " + what, "a refusal",
            speaks_python(ctx) ? "imported it" : "imported it (DLPV_OK)");
  release_expecting_one_delete(ctx, array, *made);
}

void dtype_layout_roundtrip(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  spec.layout = ctx.layout();
  spec.shape = {3, 4};
  // Every array library has float32 and int64 compact arrays: refusing one is a failure. A
  // strided layout (Fortran, every 2nd element, negative or zero strides) is one a library may
  // not be able to hold (JAX keeps compact arrays only): refusing it cleanly is lawful, misreading
  // it is not. Other dtypes are optional features: a refusal is a skip.
  const std::string dtype = dtype_name(spec.dtype);
  const bool core = dtype == "float32" || dtype == "int64";
  const bool compact = spec.layout == DLPV_LAYOUT_CONTIGUOUS;
  const std::string& first = ctx.info().requirements.front();
  consumer_roundtrip(ctx, spec, ctx.versioned(), first == "DEL-02" ? "LAYOUT-01" : first.c_str(),
                     !compact ? Refusal::allowed : core ? Refusal::fails : Refusal::skips,
                     fmt::format("a 3x4 {} {} tensor", layout_name(spec.layout), dtype));
}

}  // namespace dlpv::cases
