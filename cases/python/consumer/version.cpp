// cases/python/consumer/version.cpp: python.consumer.version.*: a versioned tensor of another
// major (2.0, 0.8) is refused without reading past its prefix and deleted once (VER-03, DEL-08);
// a minor above the consumer's (1.99) is imported (VER-04).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

// VER-03. dlpack.h (DLPackVersion): "If an obtained DLPack tensor has a major version that
// disagrees with the version number specified in this header file (i.e. major !=
// DLPACK_MAJOR_VERSION), the consumer must call the deleter (and it is safe to do so). It is not
// safe to access any other fields as the memory layout will have changed." That holds for 2.0
// and for 0.8 in a versioned capsule alike (a MUST, so a fail). dl_tensor lies on
// a guard page: reading it kills the worker (a crash in phase import).
void other_major(CaseContext& ctx, const std::string& major) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!takes_versioned(ps)) ctx.skip(legacy_reason(ps));
    MadeSpec spec = home_spec(ps);
    spec.version = major == "0" ? DLPackVersion{0, 8} : DLPackVersion{2, 0};
    spec.guard_after_prefix = true;
    const std::string what = fmt::format("a versioned tensor stamped {}.{}", spec.version.major, spec.version.minor);
    Feed f = feed(ctx, ps, spec, true, py::dict(), {}, "VER-03");
    ctx.phase("inspect");
    ctx.check(f.result.raised, "VER-03", what + " is refused (an exception): its layout is unknown", "an exception",
              f.result.what());
    if (f.result.raised && !f.result.is("BufferError"))
      ctx.note(what + " was refused with " + f.result.type + " (ERR-07 prefers BufferError)");
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08", "the refused tensor is deleted exactly once after the capsule is dropped");
  });
}

DLPV_CASES {
  for (const char* major : {"2", "0"}) {
    const std::string m = major;
    Declare(m == "2" ? "python.consumer.version.major_mismatch" : "python.consumer.version.major0",
            fmt::format("a versioned tensor stamped {} is refused without reading past its prefix, deleted exactly once",
                        m == "2" ? "2.0" : "0.8"))
        .must({"VER-03", "DEL-08"}).python().label("major", m)
        .needs({need::import_legacy}).proven_by({"consumer_no_major_check"})
        .run([m](CaseContext& ctx) { other_major(ctx, m); });
  }
}

void minor99(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!takes_versioned(ps)) ctx.skip(legacy_reason(ps));
    MadeSpec spec = home_spec(ps);
    spec.version = DLPackVersion{1, 99};
    Feed f = feed(ctx, ps, spec, true);
    if (ctx.check(!f.result.raised, "VER-04", "a float32 tensor stamped 1.99 is imported", "an array", f.result.what())) {
      const std::string diff = values_differ(ps, f.result.value, *f.made);
      ctx.check_as(Severity::must, diff.empty(), "VER-04", "... with the right values", "the pattern", diff);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.version.minor99", "a tensor stamped 1.99 is imported")
      .should({"VER-04", "DEL-02"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_rejects_minor_ahead"})
      .run(minor99);
}

}  // namespace
}  // namespace dlpv::python
