// cases/python/xapi/capsule.cpp: python.xapi.capsule: the attribute is a capsule named
// dlpack_exchange_api (XAPI-03).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

void capsule_form(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::object type = type_of(x);
    if (!py::hasattr(type, kXapiAttr)) {
      if (!py::hasattr(type, kXapiAttrV12)) ctx.skip("the array type has no __dlpack_c_exchange_api__ (optional, XAPI-01)");
      py::object v12 = type.attr(kXapiAttrV12);
      ctx.check_as(Severity::should, false, "XAPI-03",
                   "DLPack 1.3 names the attribute __dlpack_c_exchange_api__ and makes it a capsule",
                   "__dlpack_c_exchange_api__ capsule",
                   "only __c_dlpack_exchange_api__ = " + py::repr(v12).cast<std::string>() + " (the DLPack 1.2 int)");
      return;
    }
    py::object a = type.attr(kXapiAttr);
    if (py::isinstance<py::int_>(a)) {
      ctx.check_as(Severity::should, false, "XAPI-03", "the attribute is a capsule, not an int (DLPack 1.2 style)",
                   "a capsule", "an int");
      return;
    }
    const bool valid = PyCapsule_IsValid(a.ptr(), kExchangeName) != 0;
    ctx.check(valid, "XAPI-03", "__dlpack_c_exchange_api__ is a non-NULL capsule named 'dlpack_exchange_api'",
              "capsule 'dlpack_exchange_api'",
              capsule_name(a).empty() ? py::repr(a).cast<std::string>() : "capsule '" + capsule_name(a) + "'");
  });
}

DLPV_CASES {
  Declare("python.xapi.capsule", "__dlpack_c_exchange_api__ is a non-NULL capsule named 'dlpack_exchange_api'")
      .must({"XAPI-03"}).python()
      .proven_by({"xapi_int_v12"})
      .run(capsule_form);
}

}  // namespace
}  // namespace dlpv::python
