// cases/python/consumer/flags.cpp: python.consumer.flags.*: a READ_ONLY tensor imports as a
// read-only array (FLAG-04).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void read_only_flag(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!takes_versioned(ps)) ctx.skip(legacy_reason(ps) + " (legacy capsules carry no flags)");
    MadeSpec spec = home_spec(ps);
    spec.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    Feed f = feed(ctx, ps, spec, true);
    if (ctx.check(!f.result.raised, "FLAG-04", "a READ_ONLY tensor is imported (not refused)", "an array",
                  f.result.what())) {
      py::object w = ps.adapter().attr("is_writable")(f.result.value);
      if (w.is_none())
        ctx.check_as(Severity::may, true, "FLAG-04", "the library has no read-only arrays (the flag is ignored)");
      else
        ctx.check(!w.cast<bool>(), "FLAG-04", "the imported array of a READ_ONLY tensor is read-only", "read-only",
                  "writable");
    }
    f.settle(ctx);
    // The data lay in read-only pages (a write would have killed the import, charged to this
    // case's FLAG-04); what the deleter found, where the pages could not be protected.
    ctx.check(!f.made->read_only_data_written(), "FLAG-04", "the consumer never wrote into the READ_ONLY tensor's memory",
              "the bytes as made", "changed by the time the deleter ran");
  });
}

DLPV_CASES {
  Declare("python.consumer.flags.read_only", "a READ_ONLY tensor imports as a read-only array")
      .should({"FLAG-04"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_result_flags", "consumer_writes_read_only"})
      .run(read_only_flag);
}

}  // namespace
}  // namespace dlpv::python
