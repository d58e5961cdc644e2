// cases/python/xapi/dltensor_from_py_object.cpp: python.xapi.dltensor_from_py_object:
// dltensor_from_py_object_no_sync (XAPI-12).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include <cstring>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

constexpr unsigned char kPoison = 0xA5;

// The fields of `t` that still hold the poison pattern, by name ("" when every one was written).
std::string poisoned_fields(const DLTensor& t) {
  auto poisoned = [](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i)
      if (b[i] != kPoison) return false;
    return true;
  };
  std::string out;
  auto add = [&](const char* name, const void* p, size_t n) {
    if (poisoned(p, n)) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  add("data", &t.data, sizeof t.data);
  add("device", &t.device, sizeof t.device);
  add("ndim", &t.ndim, sizeof t.ndim);
  add("dtype", &t.dtype, sizeof t.dtype);
  add("shape", &t.shape, sizeof t.shape);
  add("strides", &t.strides, sizeof t.strides);
  add("byte_offset", &t.byte_offset, sizeof t.byte_offset);
  return out;
}

void dltensor_from_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x);
    if (!api->dltensor_from_py_object_no_sync)
      ctx.skip("dltensor_from_py_object_no_sync is NULL (optional in the table)");
    // The output struct is pre-filled with a poison pattern, not zeros, so a field the library
    // leaves unwritten shows (a zero byte_offset would look right by luck).
    DLTensor d;
    std::memset(&d, kPoison, sizeof d);
    const int rc = api->dltensor_from_py_object_no_sync(x.ptr(), &d);
    if (rc != 0) {
      std::string err = PyErr_Occurred() ? describe(py::error_already_set()) : "no exception set";
      ctx.check(false, "XAPI-12", "dltensor_from_py_object_no_sync fills a DLTensor", "0", fmt::format("{}: {}", rc, err));
      return;
    }
    const std::string unwritten = poisoned_fields(d);
    if (!ctx.check(unwritten.empty(), "XAPI-12",
                   "dltensor_from_py_object_no_sync writes every field of the DLTensor it is given "
                   "(pre-filled with 0xA5 bytes)", "every field written", "still poison: " + unwritten))
      return;
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
      .proven_by({"xapi_producer_functions", "xapi_dltensor_skips_offset"})
      .run(dltensor_from_py_object);
}

}  // namespace
}  // namespace dlpv::python
