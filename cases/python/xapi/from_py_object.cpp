// cases/python/xapi/from_py_object.cpp: python.xapi.from_py_object:
// managed_tensor_from_py_object_no_sync against __dlpack__ (XAPI-10).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

void from_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    compare_routes(ctx, ps, "XAPI-10", true);
    py::object x0 = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x0);
    if (!api->managed_tensor_from_py_object_no_sync) return;
    py::object a = ps.adapter();
    if (!py::hasattr(a, "unexportable")) return;
    for (auto item : py::list(a.attr("unexportable")())) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      const std::string desc = t[0].cast<std::string>();
      // The table serves only instances of the type it came from (XAPI-20).
      if (!type_of(t[1]).is(type_of(x0))) continue;
      auto* const poison = static_cast<DLManagedTensorVersioned*>(guard_address());
      DLManagedTensorVersioned* m = poison;
      const int rc = api->managed_tensor_from_py_object_no_sync(t[1].ptr(), &m);
      if (rc == 0) {
        ctx.check(false, "XAPI-10", "managed_tensor_from_py_object_no_sync refuses " + desc, "-1 and BufferError",
                  m == poison ? "0 (and *out left unwritten)" : "0 (exported it)");
        if (m && m != poison && m->deleter) m->deleter(m);
        continue;
      }
      if (!PyErr_Occurred()) {
        ctx.check(false, "XAPI-10", "refusing " + desc + " returns non-zero with a Python exception set",
                  "an exception set", "no exception set");
        continue;
      }
      py::error_already_set e;
      const std::string type = describe(e);
      // dlpack.h (DLPackManagedTensorFromPyObjectNoSync): "If the data cannot be described using
      // DLPack this should be a BufferError if possible." Should: another type is a warning.
      ctx.check_as(Severity::should, type.rfind("BufferError", 0) == 0, "XAPI-10",
                   "refusing " + desc + " sets a BufferError (\"should be a BufferError if possible\")", "BufferError",
                   type);
    }
  });
}

DLPV_CASES {
  Declare("python.xapi.from_py_object",
          "managed_tensor_from_py_object_no_sync matches __dlpack__ and refuses with BufferError")
      .must({"XAPI-10"}).python()
      .proven_by({"xapi_from_disagrees", "xapi_producer_functions", "xapi_from_unwritten"})
      .run(from_py_object);
}

}  // namespace
}  // namespace dlpv::python
