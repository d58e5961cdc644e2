// cases/python/consumer/struct_from_name.cpp: python.consumer.struct_from_name.*: the struct is
// read as the kind its capsule name says, whatever max_version asked (CAP-09, VER-05), and
// deleted once (DEL-02/08).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

void struct_from_name_legacy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // The scripted producer ignores max_version (whatever the consumer asks) and hands out a legacy struct.
    MadeSpec spec = home_spec(ps);
    Feed f = feed(ctx, ps, spec, false);
    py::object kw = first_dlpack_kwargs(f.p());
    if (!ctx.check(!f.result.raised, "VER-05",
                   "a 'dltensor' capsule answering " + py::repr(kw).cast<std::string>() + " is imported",
                   "an array", f.result.what()))
      return;
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check_as(Severity::must, diff.empty(), "CAP-09", "the struct is read as the kind its capsule name says (DLManagedTensor)",
              "the pattern", diff);
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.struct_from_name.legacy",
          "a 'dltensor' capsule answering max_version is read as a DLManagedTensor")
      .must({"CAP-09", "VER-05", "DEL-02"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_ignores_capsule_name"})
      .run(struct_from_name_legacy);
}

void struct_minor_ahead(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!speaks_versioned(ps)) ctx.skip(legacy_reason(ps));
    const DLPackVersion asked = ps.facts().consumer_max;
    MadeSpec spec = home_spec(ps);
    spec.version = DLPackVersion{asked.major, asked.minor + 1};
    Feed f = feed(ctx, ps, spec, true);
    const std::string what = fmt::format("a versioned capsule stamped {}.{} (one minor above max_version={}.{})",
                                         spec.version.major, spec.version.minor, asked.major, asked.minor);
    if (!ctx.check(!f.result.raised, "VER-05", what + " is imported", "an array", f.result.what())) {
      f.settle(ctx);
      check_deleted_once(ctx, f, "DEL-08", "a refused tensor is deleted exactly once");
      return;
    }
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check_as(Severity::must, diff.empty(), "CAP-09", what + " is read as a DLManagedTensorVersioned", "the pattern", diff);
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

DLPV_CASES {
  Declare("python.consumer.struct_from_name.minor_ahead",
          "a versioned capsule with a minor above the request is imported")
      .must({"VER-05", "CAP-09", "DEL-08"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_rejects_minor_ahead"})
      .run(struct_minor_ahead);
}

}  // namespace
}  // namespace dlpv::python
