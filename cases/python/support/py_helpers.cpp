// cases/python/support/py_helpers.cpp
// SPDX-License-Identifier: Apache-2.0
#include "py_helpers.hpp"


#include <cstring>

namespace dlpv::python {

std::string Call::what() const {
  if (raised) return "raised " + text;
  const std::string name = capsule_name(value);
  if (!name.empty()) return "returned a '" + name + "' capsule";
  // The value is the library's: its repr may raise (torch's repr of a tensor on a device
  // this build has no kernels for raises NotImplementedError), and that is not the case's result.
  try {
    return "returned " + py::repr(value).cast<std::string>();
  } catch (py::error_already_set& e) {
    return "returned a '" + py::type::of(value).attr("__name__").cast<std::string>() +
           "' object (its repr raised " + exception_type(e) + ")";
  }
}

void refused_export(CaseContext& ctx, const std::string& what, const std::string& answer) {
  ctx.skip("the package refused the export this case starts from: " + what + " " + answer +
           " (its answer, not a failure of the validator; the cases about that request judge it)");
}

bool is_no_refusal(const py::error_already_set& e) {
  return !e.matches(PyExc_Exception) || e.matches(PyExc_MemoryError) || e.matches(PyExc_SystemError) ||
         e.matches(PyExc_RecursionError);
}

Call call_dlpack(py::handle x, py::dict kwargs) {
  return attempt([&] { return x.attr("__dlpack__")(**kwargs); });
}

py::dict kw_max(uint32_t major, uint32_t minor) {
  py::dict kw;
  kw["max_version"] = py::make_tuple(major, minor);
  return kw;
}

void gc_collect(CaseContext& ctx) {
  if (PyObject* pending = PyErr_Occurred()) {
    const std::string type = reinterpret_cast<PyTypeObject*>(pending)->tp_name;
    PyErr_Clear();
    ctx.check_as(Severity::should, false, "DEL-09",
                 "a deleter run by a capsule destructor left a Python exception set", "none", type);
  }
  PyGC_Collect();
}

DLTensor* Taken::tensor() const {
  return versioned ? &static_cast<DLManagedTensorVersioned*>(p)->dl_tensor
                   : &static_cast<DLManagedTensor*>(p)->dl_tensor;
}

void Taken::release() {
  if (!p) return;
  call_deleter(p, versioned);
  p = nullptr;
}

Taken take(CaseContext& ctx, py::handle cap, const char* req) {
  const std::string name = capsule_name(cap);
  Taken t;
  t.versioned = name == kVersionedName;
  if (!t.versioned && name != kLegacyName) {
    ctx.check(false, req, "__dlpack__ returns an unconsumed DLPack capsule",
              "'dltensor' or 'dltensor_versioned'", name.empty() ? "not a capsule" : "'" + name + "'");
    ctx.stop();
  }
  t.p = capsule_pointer(cap);
  if (!t.p) {
    ctx.check(false, req, "the capsule holds a non-NULL pointer", "non-NULL", "NULL");
    ctx.stop();
  }
  if (PyCapsule_SetName(cap.ptr(), t.versioned ? kUsedVersionedName : kUsedLegacyName) != 0)
    throw py::error_already_set();
  return t;
}

bool plausible(const void* addr, const std::vector<int64_t>& shape, DLDataType dtype, std::string* why) {
  DLTensor t{};
  if (!safe_read(addr, &t, sizeof t)) { *why = "the DLTensor is unreadable"; return false; }
  if (t.ndim != static_cast<int32_t>(shape.size())) { *why = fmt::format("ndim {}", t.ndim); return false; }
  std::vector<int64_t> got(shape.size());
  if (!shape.empty() && (!t.shape || !safe_read(t.shape, got.data(), got.size() * 8))) {
    *why = "shape unreadable";
    return false;
  }
  if (got != shape) { *why = "shape " + shape_text(got); return false; }
  if (!dtype_equal(t.dtype, dtype)) { *why = "dtype " + dtype_name(t.dtype); return false; }
  return true;
}

std::string data_mismatch(const DLTensor& t, const std::vector<int64_t>& shape, DLDataType dtype, uint32_t layout,
                          int values) {
  std::vector<uint8_t> got;
  std::string why;
  if (!gather_elements(t, got, why)) return why;
  return describe_mismatch(dtype, expected_bytes(dtype, shape, layout, values), got);
}

std::optional<std::pair<int, int>> device_of(py::handle array) {
  try {
    py::tuple d = array.attr("__dlpack_device__")();
    return std::pair<int, int>{py::int_(d[0]).cast<int>(), py::int_(d[1]).cast<int>()};
  } catch (py::error_already_set&) {
  } catch (const py::cast_error&) {
  }
  return std::nullopt;
}

long long current_cuda_stream(CaseContext& ctx, PythonSubject& ps) {
  py::object a = ps.adapter();
  if (!py::hasattr(a, "current_stream"))
    ctx.skip("the adapter cannot name the package's current stream (optional current_stream())");
  py::object current;
  try {
    current = a.attr("current_stream")(py::make_tuple(static_cast<int>(kDLCUDA), 0));
  } catch (py::error_already_set& e) {
    const std::string what = e.what();
    ctx.skip("the package names no current CUDA stream here: " +
             what.substr(0, std::min(what.find('\n'), size_t{200})));
  }
  if (!py::isinstance<py::int_>(current) || py::isinstance<py::bool_>(current))
    ctx.harness_error("current_stream() returned " + py::repr(current).cast<std::string>());
  return current.cast<long long>();
}

}  // namespace dlpv::python
