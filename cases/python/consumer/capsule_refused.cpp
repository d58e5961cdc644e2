// cases/python/consumer/capsule_refused.cpp: python.consumer.capsule_refused: used_* and
// foreign-named capsules are refused without any deleter call (CAP-06).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void capsule_refused(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    for (const char* name : {v ? kUsedVersionedName : kUsedLegacyName, "foo"}) {
      MadeSpec spec = home_spec(ps);
      Feed f = feed(ctx, ps, spec, v, py::dict(), [&](ProducerScript& c) { c.capsule_name = name; });
      const std::string what = fmt::format("a capsule named '{}'", name);
      ctx.check(f.result.raised, "CAP-06", what + " is refused with an exception", "an exception", f.result.what());
      f.settle(ctx);
      ctx.check(f.deletes() == 0, "CAP-06", what + " is refused without calling any deleter", "0 calls",
                fmt::format("{} call(s)", f.deletes()));
    }
  });
}

DLPV_CASES {
  Declare("python.consumer.capsule_refused", "used_* and foreign-named capsules are refused without any deleter call")
      .must({"CAP-06"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_takes_any_capsule"})
      .run(capsule_refused);
}

}  // namespace
}  // namespace dlpv::python
