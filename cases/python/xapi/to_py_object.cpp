// cases/python/xapi/to_py_object.cpp: python.xapi.to_py_object:
// managed_tensor_to_py_object_no_sync takes ownership (XAPI-14).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

void to_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x);
    if (!api->managed_tensor_to_py_object_no_sync) {
      ctx.check(false, "XAPI-14", "managed_tensor_to_py_object_no_sync is non-NULL (required)", "a function", "NULL");
      return;
    }
    MadeSpec spec;
    auto made = MadeTensor::make(spec, true);
    void* out = nullptr;
    ctx.phase("import");
    const int rc = api->managed_tensor_to_py_object_no_sync(made->versioned(), &out);
    if (rc != 0 || !out) {
      std::string err = PyErr_Occurred() ? describe(py::error_already_set()) : "no exception set";
      ctx.check(false, "XAPI-14", "managed_tensor_to_py_object_no_sync wraps a float32 CPU tensor", "0 and an object",
                fmt::format("{}: {}", rc, err));
      if (made->deleter_calls() == 0) (void)made.release();  // ownership on failure is unspecified (A7)
      return;
    }
    py::object obj = py::reinterpret_steal<py::object>(static_cast<PyObject*>(out));
    ctx.check(type_of(obj).is(type_of(x)), "XAPI-14", "the result is an instance of the producer's array type",
              py::str(type_of(x)).cast<std::string>(), py::str(type_of(obj)).cast<std::string>());
    ctx.check(made->deleter_calls() == 0, "XAPI-14", "the tensor is not deleted while the object lives", "0 calls",
              fmt::format("{} call(s)", made->deleter_calls()));
    try {
      std::string got = py::bytes(ps.adapter().attr("to_bytes")(obj)).cast<std::string>();
      ctx.check(std::vector<uint8_t>(got.begin(), got.end()) == made->expected(), "XAPI-14",
                "the object holds the tensor's values", "the pattern", "different bytes");
    } catch (py::error_already_set& e) {
      ctx.note("to_bytes of the wrapped object raised " + describe(e));
    }
    ctx.phase("release");
    obj = py::none();
    gc_collect(ctx);
    {
      py::gil_scoped_release nogil;
      await_calls([&] { return made->deleter_calls(); }, 1);
    }
    ctx.check(made->deleter_calls() == 1, "XAPI-14", "the deleter runs exactly once when the object dies", "1 call",
              fmt::format("{} call(s)", made->deleter_calls()));
    if (made->deleter_calls() == 0) (void)made.release();
  });
}

DLPV_CASES {
  Declare("python.xapi.to_py_object",
          "managed_tensor_to_py_object_no_sync takes ownership: deleter once when the object dies")
      .must({"XAPI-14"}).python()
      .proven_by({"xapi_producer_functions"})
      .run(to_py_object);
}

}  // namespace
}  // namespace dlpv::python
