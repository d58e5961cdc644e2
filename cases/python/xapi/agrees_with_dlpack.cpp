// cases/python/xapi/agrees_with_dlpack.cpp: python.xapi.agrees_with_dlpack: the exchange-API
// export agrees with __dlpack__ (XAPI-18).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

void agrees_with_dlpack(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) { compare_routes(ctx, ps, "XAPI-18", false); });
}

DLPV_CASES {
  Declare("python.xapi.agrees_with_dlpack", "exchange-API and __dlpack__ exports agree field by field")
      .should({"XAPI-18"}).python()
      .proven_by({"xapi_from_disagrees"})
      .run(agrees_with_dlpack);
}

}  // namespace
}  // namespace dlpv::python
