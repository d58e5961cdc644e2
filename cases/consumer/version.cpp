// cases/consumer/version.cpp: consumer.version.*: a newer minor version is accepted (VER-04);
// major versions it cannot know (2.0 and, in a versioned struct, 0.8) are refused without
// reading past the version prefix and released exactly once (VER-03, DEL-08).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void minor_ahead(CaseContext& ctx) {
  MadeSpec spec;
  spec.version = DLPackVersion{1, 99};
  consumer_roundtrip(ctx, spec, true, "VER-04", Refusal::fails,
                     "a float32 tensor stamped version 1.99 (minor bumps only add enum values)");
}

DLPV_CASES {
  Declare("consumer.version.minor_ahead", "a versioned tensor stamped 1.99 is accepted")
      .should({"VER-04", "DEL-02"}).role(Role::consumer)
      .kind(StructKind::versioned).dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::import_versioned, need::read_array, need::release_array})
      .proven_by({"reject_minor"})
      .run(minor_ahead);
}

// A major version the consumer cannot know (2.0, or 0.8 in a versioned struct): dl_tensor
// lies on a guard page, so reading anything past the fixed prefix kills the worker (reported
// as a crash in phase import). dlpack.h (DLPackVersion): "If an obtained DLPack tensor has a
// major version that disagrees with the version number specified in this header file (i.e.
// major != DLPACK_MAJOR_VERSION), the consumer must call the deleter (and it is safe to do
// so). It is not safe to access any other fields as the memory layout will have changed."
// The deleter may be called by the importer or left to the caller (judge_refusal_ownership).
void other_major(CaseContext& ctx, DLPackVersion version) {
  MadeSpec spec;
  spec.version = version;
  spec.guard_after_prefix = true;
  const std::string what = fmt::format("a versioned tensor stamped {}.{}", spec.version.major, spec.version.minor);
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  if (!made) ctx.harness_error("could not build the guarded tensor");
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (array || rc == DLPV_OK) {
    ctx.check(false, "VER-03", "a consumer must refuse a tensor whose major version is not 1 (it cannot know the layout)",
              "refusal", fmt::format("DLPV_OK (imported {})", what));
    if (array) release_expecting_one_delete(ctx, array, *made);
    return;
  }
  const std::string error = ctx.subject().last_error();
  judge_refusal_ownership(ctx, *made, what);
  ctx.check(true, "VER-03", fmt::format("refused {} without reading past the version prefix ({})", what,
                                        refusal_seen(ctx, rc, error)));
}

DLPV_CASES {
  for (const DLPackVersion v : {DLPackVersion{2, 0}, DLPackVersion{0, 8}}) {
    Declare(fmt::format("consumer.version.major{}_refused", v.major),
            fmt::format("a versioned tensor stamped {}.{} is refused without reading past the version prefix, "
                        "and released exactly once", v.major, v.minor))
        .must({"VER-03", "DEL-08"}).role(Role::consumer)
        .kind(StructKind::versioned).dtype("float32").label("major", std::to_string(v.major))
        .needs({need::import_versioned, need::release_array})
        .proven_by({"reads_past_prefix"})
        .run([v](CaseContext& ctx) { other_major(ctx, v); });
  }
}

}  // namespace
}  // namespace dlpv::cases
