// cases/python/consumer/legacy_fallback.cpp: python.consumer.legacy_fallback[.copy]: a
// pre-2023.12 producer (stream-only __dlpack__) is imported after a first call offering
// max_version (VER-10), and copy=True is never dropped on that fallback (VER-11).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void legacy_fallback(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    Feed f = feed(ctx, ps, spec, false, py::dict(), [](ProducerScript& c) { c.legacy_signature = true; });
    ctx.check(!f.result.raised, "VER-10",
              "a pre-2023.12 producer (__dlpack__(*, stream=None) only) is imported", "an array",
              f.result.what() + "; calls " + calls_text(f.p()));
    py::object kw = first_dlpack_kwargs(f.p());
    const bool asked = !kw.is_none() && py::dict(kw).contains("max_version");
    ctx.check(asked, "VER-10", "the first __dlpack__ call offers max_version (then retries without it on TypeError)",
              "max_version in the first call", py::repr(kw).cast<std::string>());
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.legacy_fallback",
          "a stream-only __dlpack__ is imported after a first call offering max_version")
      .should({"VER-10", "DEL-02"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_no_fallback"})
      .run(legacy_fallback);
}

void legacy_fallback_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    py::dict kw;
    kw["copy"] = true;
    Feed f = feed(ctx, ps, spec, false, kw, [](ProducerScript& c) { c.legacy_signature = true; });
    skip_if_no_copy_keyword(ctx, f);
    if (f.result.raised) {
      ctx.check(true, "VER-11", "copy=True with a producer that cannot take copy= is refused: " + f.result.text);
    } else {
      auto addr = library_address(f.result.value);
      if (!addr) ctx.skip("the imported array exposes no address (__array_interface__ / data_ptr())");
      ctx.check(*addr != f.source_address(), "VER-11",
                "copy=True on the legacy fallback still yields a copy, never an alias",
                "an address other than the producer's", fmt::format("the producer's own {:#x}", *addr));
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.legacy_fallback.copy",
          "copy=True is never dropped on the legacy fallback (copy or error, never an alias)")
      .should({"VER-11", "DEL-02"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_copy_ignored"})
      .run(legacy_fallback_copy);
}

}  // namespace
}  // namespace dlpv::python
