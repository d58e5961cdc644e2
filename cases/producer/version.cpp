// cases/producer/version.cpp: producer.version.*: a versioned export declares major version 1
// (VER-01, VER-02) on float32 3x4 and every rule sample, whatever max_version the consumer asks
// for (VER-07).
// SPDX-License-Identifier: Apache-2.0

#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {


void version_major(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "VER-01");
  ctx.phase("inspect");
  ctx.check(e.v->version.major == 1, "VER-01", "a versioned tensor declares major version 1",
            "1.x", fmt::format("{}.{}", e.v->version.major, e.v->version.minor));
  const DLPackVersion declared = ctx.subject().info().dlpack_version;
  ctx.check_as(Severity::may, e.v->version.major != declared.major || e.v->version.minor <= declared.minor,
               "VER-02", "the tensor's version does not exceed the version the library declares",
               fmt::format("<= {}.{}", declared.major, declared.minor),
               fmt::format("{}.{}", e.v->version.major, e.v->version.minor));
}

DLPV_CASES {
  Declare("producer.version.major", "a versioned export declares major version 1")
      .must({"VER-01", "VER-02"}).role(Role::producer).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .per_kind({StructKind::versioned}).per_sample()
      .proven_by({"version_major0"})
      .run(version_major);
}

// max_version at, below-minor and above the producer's own version: always a versioned
// tensor of major 1, never a refusal (VER-07).
void max_version(CaseContext& ctx, DLPackVersion asked) {
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
  const std::string mv = fmt::format("{}.{}", asked.major, asked.minor);
  r.req.max_version = asked;
  DLManagedTensorVersioned* out = nullptr;
  ctx.phase("export");
  int rc = ctx.subject().export_versioned(r.req, &out);
  Exported e;
  e.v = out;
  skip_if_refused_by_validator(ctx, rc);
  if (!ctx.check(rc == DLPV_OK && out, "VER-07",
                 fmt::format("a consumer max_version of {} gets a versioned tensor, not a refusal", mv),
                 exported(ctx), refusal_seen(ctx, rc, ctx.subject().last_error())))
    return;
  ctx.check(out->version.major == 1, "VER-07", "the tensor carries the producer's own major (1)", "1.x",
            fmt::format("{}.{}", out->version.major, out->version.minor));
}

DLPV_CASES {
  const struct { DLPackVersion asked; const char* id; } asks[] = {
      {{1, 0}, "1_0"}, {{1, 99}, "1_99"}, {{2, 0}, "2_0"}};
  for (const auto& a : asks) {
    const DLPackVersion asked = a.asked;
    const std::string text = fmt::format("{}.{}", asked.major, asked.minor);
    Declare(std::string("producer.version.max_version_") + a.id,
            "max_version " + text + " yields a versioned tensor of major 1")
        .should({"VER-07"}).role(Role::producer)
        .kind(StructKind::versioned).dtype("float32").label("max_version", text)
        .needs({need::export_versioned})
        .proven_by({"max_version_strict"})
        .run([asked](CaseContext& ctx) { max_version(ctx, asked); });
  }
}

}  // namespace
}  // namespace dlpv::cases
