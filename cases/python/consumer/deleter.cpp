// cases/python/consumer/deleter.cpp: python.consumer.deleter.*: the deleter runs once, after the
// imported array dies (DEL-02); a NULL deleter is never called (DEL-03).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void deleter_once(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (!ctx.check(!f.result.raised, "DEL-02", "a float32 CPU tensor is imported", "an array", f.result.what())) return;
    gc_collect(ctx);
    const int early = f.deletes();
    if (early > 0) {
      // A consumer that copied during import may release the tensor at once ("when the borrowing
      // framework doesn't need the tensor", dlpack.h); the tensor's memory is poisoned then, so
      // the values below tell a copy from a dangling view.
      ctx.check(early == 1, "DEL-02", "a consumer that releases the tensor during import calls its deleter once",
                "1 call", fmt::format("{} call(s)", early));
      ctx.note("from_dlpack released the tensor during import (it copied the data: lawful)");
    }
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check_as(Severity::must, diff.empty(), "DEL-02",
              early ? "the imported array holds the values (its own copy: the released tensor's memory is poisoned)"
                    : "the imported array holds the values",
              "the pattern", diff);
    ctx.phase("release");
    f.settle(ctx);
    {
      py::gil_scoped_release nogil;
      await_calls([&] { return f.deletes(); }, 1);
    }
    ctx.check(f.deletes() == 1, "DEL-02", "the deleter runs exactly once after the array dies", "1 call",
              fmt::format("{} call(s)", f.deletes()));
  });
}

DLPV_CASES {
  Declare("python.consumer.deleter.once",
          "the deleter runs once, after the imported array dies, never while it lives")
      .must({"DEL-02"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_deleter_early"})
      .run(deleter_once);
}

void deleter_null(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    spec.deleter = DeleterKind::null;
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    ctx.check(!f.result.raised, "DEL-03", "a tensor whose deleter is NULL is imported", "an array", f.result.what());
    ctx.phase("release");
    f.settle(ctx);
    ctx.check(true, "DEL-03", "the array over a NULL-deleter tensor died without a crash");
  });
}

DLPV_CASES {
  Declare("python.consumer.deleter.null", "a NULL deleter is never called")
      .must({"DEL-03"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_calls_null_deleter"})
      .run(deleter_null);
}

}  // namespace
}  // namespace dlpv::python
