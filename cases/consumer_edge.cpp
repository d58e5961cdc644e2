// cases/consumer_edge.cpp: tensors at the edges of the rules a consumer must still take:
// NULL strides (LAYOUT-03), NULL deleter (DEL-03), a newer minor version (VER-04), and a
// major version it cannot know (VER-03, DEL-08).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void null_strides(CaseContext& ctx) {
  MadeSpec spec;
  spec.null_strides = true;
  spec.version = DLPackVersion{1, 1};  // NULL strides are legal up to 1.1 (LAYOUT-02)
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "LAYOUT-03", Refusal::fails,
                     "a 3x4 tensor with NULL strides (compact row-major)");
}

void null_deleter(CaseContext& ctx) {
  MadeSpec spec;
  spec.deleter = DeleterKind::null;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "DEL-03", Refusal::fails,
                     "a tensor whose deleter is NULL");
}

void minor_ahead(CaseContext& ctx) {
  MadeSpec spec;
  spec.version = DLPackVersion{1, 99};
  consumer_roundtrip(ctx, spec, true, "VER-04", Refusal::fails,
                     "a float32 tensor stamped version 1.99 (minor bumps only add enum values)");
}

// A major version the consumer cannot know: dl_tensor lies on a guard page, so reading
// anything past the fixed prefix kills the worker (reported as a crash in phase import).
void major_two(CaseContext& ctx) {
  MadeSpec spec;
  spec.version = DLPackVersion{2, 0};
  spec.guard_after_prefix = true;
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  if (!made) ctx.harness_error("could not build the guarded tensor");
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  ctx.phase("inspect");
  ctx.check_as(Severity::must, made->deleter_calls() == 0, "DEL-08",
               "a refused tensor stays the caller's: the consumer does not call its deleter",
               "0 deleter calls", fmt::format("{} call(s)", made->deleter_calls()));
  if (array || rc == DLPV_OK) {
    ctx.check(false, "VER-03", "a consumer must refuse a tensor whose major version it does not know",
              "refusal", "DLPV_OK (imported a version 2.0 tensor)");
    ctx.phase("release");
    if (array) ctx.subject().release_array(array);
    return;
  }
  ctx.check(true, "VER-03", fmt::format("refused version 2.0 without reading past the prefix (return {})", rc));
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(consumer_edge) {
  using namespace dlpv;
  auto add = [&](std::string id, std::string title, std::vector<std::string> reqs, Severity sev,
                 std::string kind, void (*fn)(CaseContext&)) {
    CaseInfo c;
    c.id = std::move(id);
    c.title = std::move(title);
    c.requirements = std::move(reqs);
    c.severity = sev;
    c.role = Role::consumer;
    c.params = {{"dtype", "float32"}, {"layout", "contiguous"}, {"version", kind}, {"device", "cpu:0"}};
    c.needs = {kind == "versioned" ? "import_versioned" : "import_legacy", "read_array", "release_array"};
    c.body = fn;
    reg.add(std::move(c));
  };
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    add("consumer.null_strides." + kind,
        kind + " import of a tensor with NULL strides reads it as compact row-major" +
            (versioned ? " (version 1.1)" : ""),
        {"LAYOUT-03", "DEL-02"}, Severity::must, kind, cases::null_strides);
    add("consumer.deleter.null." + kind, kind + " import accepts a NULL deleter and never calls it",
        {"DEL-03"}, Severity::must, kind, cases::null_deleter);
  }
  add("consumer.version.minor_ahead", "a versioned tensor stamped 1.99 is accepted",
      {"VER-04", "DEL-02"}, Severity::should, "versioned", cases::minor_ahead);
  add("consumer.version.major2_refused",
      "a version 2.0 tensor is refused without reading past the version prefix or deleting it",
      {"VER-03", "DEL-08"}, Severity::must, "versioned", cases::major_two);
}
