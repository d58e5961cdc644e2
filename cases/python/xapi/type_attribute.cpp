// cases/python/xapi/type_attribute.cpp: python.xapi.type_attribute: the array type carries
// __dlpack_c_exchange_api__ (XAPI-01/02).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

void type_attribute(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::object type = type_of(x);
    const bool on_type = py::hasattr(type, kXapiAttr);
    const bool on_instance = py::hasattr(x, kXapiAttr);
    if (!on_type && !on_instance)
      ctx.skip(py::hasattr(type, kXapiAttrV12)
                   ? "no __dlpack_c_exchange_api__; only the DLPack 1.2 int attribute (python.xapi.capsule)"
                   : "the array type has no __dlpack_c_exchange_api__: the C exchange API is optional (XAPI-01)");
    ctx.check_as(Severity::may, true, "XAPI-01", "the package offers __dlpack_c_exchange_api__");
    ctx.note("XAPI-01: __dlpack_c_exchange_api__ present");
    if (!ctx.check(on_type, "XAPI-02", "__dlpack_c_exchange_api__ is a class attribute", "on the type",
                   "only on instances"))
      return;
    py::object from_type = type.attr(kXapiAttr);
    py::object from_instance = x.attr(kXapiAttr);
    ctx.check(from_type.is(from_instance), "XAPI-02",
              "the instance lookup returns the very object the type holds", "the same object",
              py::repr(from_type).cast<std::string>() + " vs " + py::repr(from_instance).cast<std::string>());
  });
}

DLPV_CASES {
  Declare("python.xapi.type_attribute",
          "__dlpack_c_exchange_api__ (optional) is a class attribute, the same object from instances")
      .must({"XAPI-02", "XAPI-01"}).python()
      .proven_by({"xapi_on_instance"})
      .run(type_attribute);
}

}  // namespace
}  // namespace dlpv::python
