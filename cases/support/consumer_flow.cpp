// cases/support/consumer_flow.cpp
// SPDX-License-Identifier: Apache-2.0
#include "consumer_flow.hpp"

#include <fmt/format.h>

namespace dlpv::cases {

void consumer_roundtrip(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                        const char* requirement, Refusal refusal, const std::string& what) {
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  const bool counted = spec.deleter == DeleterKind::counting;
  int rc = 0;
  void* array = import_made(ctx, *made, versioned, &rc);
  if (!array) {
    ctx.check_as(Severity::must, made->deleter_calls() == 0, "DEL-08",
              "a consumer that refuses a tensor leaves ownership with the caller (no deleter call)",
              "0 deleter calls", fmt::format("{} deleter call(s)", made->deleter_calls()));
    if (rc == DLPV_OK)
      ctx.check(false, requirement, "import returned DLPV_OK but no array", "an array", "NULL");
    else if (refusal == Refusal::skips)
      ctx.skip(fmt::format("the consumer refused {} cleanly ({}): {}", what, rc, ctx.subject().last_error()));
    else if (refusal == Refusal::fails)
      ctx.check(false, requirement, "the consumer must import " + what,
                "DLPV_OK", fmt::format("refused with {}: {}", rc, ctx.subject().last_error()));
    else
      ctx.check(true, requirement, fmt::format("the consumer refused {} cleanly ({})", what, rc));
    return;
  }
  if (counted)
    ctx.check_as(Severity::must, made->deleter_calls() == 0, "DEL-02",
              "the deleter is not called while the imported array is alive", "0 calls after import",
              fmt::format("{} call(s) right after import", made->deleter_calls()));
  read_back_matches(ctx, array, made->expected(), spec.dtype, requirement,
                    "the imported array holds the tensor's elements: " + what);
  if (counted)
    ctx.check_as(Severity::must, made->deleter_calls() == 0, "DEL-02",
              "the deleter is not called while the imported array is alive", "0 calls after read",
              fmt::format("{} call(s) after read_array", made->deleter_calls()));
  ctx.phase("release");
  ctx.subject().release_array(array);
  if (counted)
    ctx.check_as(Severity::must, made->deleter_calls() == 1, "DEL-02",
              "releasing the imported array calls the deleter exactly once", "1 call",
              fmt::format("{} call(s)", made->deleter_calls()));
  else
    ctx.check(true, "DEL-03", "import and release of a tensor whose deleter is NULL");
}

void release_expecting_one_delete(CaseContext& ctx, void* array, const MadeTensor& made) {
  ctx.phase("release");
  ctx.subject().release_array(array);
  ctx.check_as(Severity::must, made.deleter_calls() == 1, "DEL-02",
               "releasing the imported array calls the deleter exactly once", "1 call",
               fmt::format("{} call(s)", made.deleter_calls()));
}

void consumer_must_refuse(CaseContext& ctx, const MadeSpec& spec, bool versioned,
                          const char* requirement, const std::string& what) {
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, versioned);
  if (!made) ctx.harness_error("could not build the test tensor");
  int rc = 0;
  void* array = import_made(ctx, *made, versioned, &rc);
  ctx.check_as(Severity::must, array || made->deleter_calls() == 0, "DEL-08",
               "a refused tensor stays the caller's: the consumer does not call its deleter",
               "0 deleter calls", fmt::format("{} call(s)", made->deleter_calls()));
  if (!array) {
    ctx.check(rc != DLPV_OK, requirement, "import returned DLPV_OK but no array", "a refusal code", "DLPV_OK");
    ctx.check(true, requirement, fmt::format("refused {} (return {}: {})", what, rc, ctx.subject().last_error()));
    return;
  }
  ctx.check(false, requirement, "the consumer must refuse " + what, "a refusal",
            "imported it (DLPV_OK)");
  release_expecting_one_delete(ctx, array, *made);
}

}  // namespace dlpv::cases
