// cases/python/error.cpp: python.error.*: data DLPack cannot express raises BufferError (ERR-01,
// DTYPE-04/12, LAYOUT-12/13).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void unexportable(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object a = ps.adapter();
    if (!py::hasattr(a, "unexportable")) ctx.skip("the adapter names no unexportable arrays (optional unexportable())");
    py::list items = a.attr("unexportable")();
    if (items.size() == 0) ctx.skip("the adapter names no unexportable arrays");
    for (auto item : items) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      const std::string desc = t[0].cast<std::string>();
      // An optional third element names the requirement the array is about (DTYPE-04 for
      // non-native byte order, DTYPE-12 for padded floats, LAYOUT-12 for byte strides that
      // elements cannot express, LAYOUT-13 for sparse arrays); ERR-01 otherwise.
      const std::string req = t.size() > 2 ? t[2].cast<std::string>() : std::string("ERR-01");
      Call c = call_dlpack(t[1], newest_kwargs(ps));
      if (!c.raised) {
        ctx.check_as(Severity::must, false, req, "exporting " + desc + " is refused", "BufferError", c.what());
        continue;
      }
      ctx.check(c.is("BufferError"), req, "exporting " + desc + " raises BufferError", "BufferError", c.text);
    }
  });
}

DLPV_CASES {
  Declare("python.error.unexportable", "data DLPack cannot express raises BufferError")
      .should({"ERR-01", "DTYPE-04", "DTYPE-12", "LAYOUT-12", "LAYOUT-13"}).python().also_needs(need::producer_protocol)
      .proven_by({"exports_big_endian"})
      .run(unexportable);
}

}  // namespace
}  // namespace dlpv::python
