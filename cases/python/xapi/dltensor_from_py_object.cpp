// cases/python/xapi/dltensor_from_py_object.cpp: python.xapi.dltensor_from_py_object:
// dltensor_from_py_object_no_sync (XAPI-12).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::py_shim {
namespace {

void dltensor_from_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kXapiShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x);
    if (!api->dltensor_from_py_object_no_sync)
      ctx.skip("dltensor_from_py_object_no_sync is NULL (optional in the table)");
    DLTensor d{};
    const int rc = api->dltensor_from_py_object_no_sync(x.ptr(), &d);
    if (rc != 0) {
      std::string err = PyErr_Occurred() ? describe(py::error_already_set()) : "no exception set";
      ctx.check(false, "XAPI-12", "dltensor_from_py_object_no_sync fills a DLTensor", "0", fmt::format("{}: {}", rc, err));
      return;
    }
    ctx.check(d.ndim == 0 || d.strides != nullptr, "XAPI-12", "strides are non-NULL for ndim > 0", "non-NULL", "NULL");
    Call c = call_dlpack(x, kw_max(1, 3));
    if (!c.raised && capsule_name(c.value) == kVersionedName) {
      Taken t = take(ctx, c.value, "CAP-01");
      auto* v = static_cast<DLManagedTensorVersioned*>(t.p);
      const std::string diff = diff_fields(fields_of(d, v->flags), fields_of(v->dl_tensor, v->flags), true);
      ctx.check(diff.empty(), "XAPI-12", "the non-owning DLTensor equals the managed export", "identical fields", diff);
      t.release();
    }
    // It must not allocate: many calls leave the heap where it was.
    constexpr int kCalls = 200000;
    gc_collect(ctx);
    const size_t before = heap_in_use();
    int failures = 0;
    for (int i = 0; i < kCalls; ++i) {
      DLTensor e{};
      if (api->dltensor_from_py_object_no_sync(x.ptr(), &e) != 0) {
        ++failures;
        PyErr_Clear();
      }
    }
    const size_t after = heap_in_use();
    const long long grown = static_cast<long long>(after) - static_cast<long long>(before);
    ctx.check(failures == 0, "XAPI-12", fmt::format("{} repeated calls succeed", kCalls), "0 failures",
              std::to_string(failures));
    ctx.check(grown < 512 * 1024, "XAPI-12",
              fmt::format("{} calls do not grow the heap (the DLTensor is not owning)", kCalls), "< 512 KiB growth",
              fmt::format("{} KiB", grown / 1024));
  });
}

DLPV_CASES {
  Declare("python.xapi.dltensor_from_py_object",
          "dltensor_from_py_object_no_sync fills a non-owning DLTensor without allocating")
      .must({"XAPI-12"}).python()
      .proven_by({"xapi_producer_functions"})
      .run(dltensor_from_py_object);
}

}  // namespace
}  // namespace dlpv::py_shim
