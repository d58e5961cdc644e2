// subjects/python/src/python_subject.cpp: the Subject interface over a Python adapter.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/python_subject.hpp>

#include <dlfcn.h>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>

#include <dlpack_validate/scripted_producer.hpp>

#include "exceptions.hpp"

namespace dlpv {
// harness/src/worker.cpp: true in a worker process, which ends with its subjects.
bool in_worker_process();
}  // namespace dlpv

namespace dlpv::python {

namespace {
thread_local std::string t_last_error;
thread_local bool t_refused_by_adapter = false;  // the last error is the adapter's NotImplemented
thread_local std::string t_refusal_not_buffer_error;  // the last export's refusal, when not a BufferError
thread_local std::optional<uintptr_t> t_last_source;  // element 0 of the last export's source array

py::tuple version_tuple(DLPackVersion v) { return py::make_tuple(v.major, v.minor); }
}  // namespace

std::string exception_type(const py::error_already_set& e) {
  py::handle t = e.type();
  if (!t) return "?";
  return py::str(t.attr("__name__")).cast<std::string>();
}

std::string describe(const py::error_already_set& e) {
  std::string msg;
  try {
    msg = py::str(e.value()).cast<std::string>();
  } catch (...) {
    msg = "(unprintable)";
  }
  return exception_type(e) + (msg.empty() ? "" : ": " + msg);
}

std::string capsule_name(py::handle obj) {
  if (!obj || !PyCapsule_CheckExact(obj.ptr())) return {};
  const char* n = PyCapsule_GetName(obj.ptr());
  if (PyErr_Occurred()) PyErr_Clear();
  return n ? std::string(n) : std::string("<NULL>");
}

std::optional<uintptr_t> library_address(py::handle x) {
  try {
    if (py::hasattr(x, "__array_interface__"))
      return py::dict(x.attr("__array_interface__"))["data"].cast<py::tuple>()[0].cast<uintptr_t>();
    if (py::hasattr(x, "__cuda_array_interface__"))  // CuPy, Numba: a device address
      return py::dict(x.attr("__cuda_array_interface__"))["data"].cast<py::tuple>()[0].cast<uintptr_t>();
    if (py::hasattr(x, "__sycl_usm_array_interface__")) {  // dpnp, dpctl: a USM address
      // Its `data` is the allocation's; element 0 lies `offset` elements past it (counted in
      // elements of the typestr's size: a reversed view of 24 complex64 says offset 23).
      const py::dict i = x.attr("__sycl_usm_array_interface__");
      const auto base = i["data"].cast<py::tuple>()[0].cast<uintptr_t>();
      const auto offset = i.contains("offset") ? i["offset"].cast<int64_t>() : 0;
      const auto typestr = i["typestr"].cast<std::string>();
      const auto itemsize = typestr.size() > 2 ? std::stoll(typestr.substr(2)) : 0;
      return base + static_cast<uintptr_t>(offset * itemsize);
    }
    if (py::hasattr(x, "data_ptr")) return x.attr("data_ptr")().cast<uintptr_t>();
  } catch (py::error_already_set&) {
  } catch (const py::cast_error&) {
  } catch (const std::logic_error&) {  // a typestr without a size
  }
  return std::nullopt;
}

void* capsule_pointer(py::handle obj) {
  if (!obj || !PyCapsule_CheckExact(obj.ptr())) return nullptr;
  const char* n = PyCapsule_GetName(obj.ptr());
  void* p = PyCapsule_GetPointer(obj.ptr(), n);
  if (!p) PyErr_Clear();
  return p;
}

// ---- the standard library, as it was before the package came ------------------------------

namespace {
// Leaked on purpose: they outlive every subject and must not be released after finalisation.
PyObject* g_gc_freeze = nullptr;
PyObject* g_gc_unfreeze = nullptr;
void call_kept(PyObject* f) {
  if (!f) return;
  PyObject* r = PyObject_CallNoArgs(f);
  if (r) Py_DECREF(r);
  else PyErr_Clear();
}
}  // namespace

void keep_stdlib_references() {
  if (g_gc_freeze) return;
  PyObject* gc = PyImport_ImportModule("gc");
  if (!gc) {
    PyErr_Clear();
    return;
  }
  g_gc_freeze = PyObject_GetAttrString(gc, "freeze");
  g_gc_unfreeze = PyObject_GetAttrString(gc, "unfreeze");
  PyErr_Clear();
  Py_DECREF(gc);
}
void gc_freeze() {
  keep_stdlib_references();  // (a no-op after the module's init took them)
  call_kept(g_gc_freeze);
}
void gc_unfreeze() { call_kept(g_gc_unfreeze); }

// ---- construction and load checks ----------------------------------------------------------

PythonSubject::PythonSubject(py::object adapter, std::string spec, int index)
    : adapter_(std::move(adapter)), spec_(std::move(spec)) {
  info_.index = index;
  info_.kind = "python";
  py::module_ adapters = py::module_::import("validator.adapters");
  info_.path = adapters.attr("origin")(adapter_, spec_).cast<std::string>();
  info_.name = fmt::format("{} {}", py::str(adapter_.attr("name")).cast<std::string>(),
                           py::str(adapter_.attr("version")).cast<std::string>());
  // What the adapter says about itself (optional `notes`, a list of strings): the generic
  // adapter names there what it cannot do that an adapter of the package's own would.
  if (py::hasattr(adapter_, "notes")) {
    try {
      for (auto n : py::iter(adapter_.attr("notes"))) info_.notes.push_back(py::str(n).cast<std::string>());
    } catch (py::error_already_set& e) {
      info_.notes.push_back("adapter.notes is not a list of strings: " + describe(e));
    }
  }
  if (py::hasattr(adapter_, "read_back")) {
    try {
      read_back_ = py::str(adapter_.attr("read_back")).cast<std::string>();
    } catch (py::error_already_set& e) {
      info_.notes.push_back("adapter.read_back is not a string: " + describe(e));
    }
  }
  run_load_checks();
}

PythonSubject::~PythonSubject() {
  py::gil_scoped_acquire gil;
  adapter_ = py::object();
  exchange_type_ = py::object();
  // In a process that outlives the subject (--isolate=none, validator.run in the caller's own
  // interpreter) the objects frozen at load are handed back to the collector. A worker ends
  // with its subject: left frozen, the interpreter's last collection skips them (a faster exit).
  if (dlpv::in_worker_process()) return;
  gc_unfreeze();
}

py::object PythonSubject::make(const std::vector<int64_t>& shape, DLDataType dtype,
                               const std::string& layout, bool read_only, std::optional<DLDevice> device,
                               int values) {
  if (dtype.lanes != 1) throw NotImplemented{"vector dtypes (lanes > 1) have no Python array form"};
  if (!unavailable_.empty()) throw NotImplemented{unavailable_};
  const DLDevice where = device.value_or(home_);
  py::tuple shp(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) shp[i] = shape[i];
  const bool edge = values == DLPV_VALUES_EDGE;
  if (edge && !make_takes_values()) {
    throw NotImplemented{"the adapter's make() takes no values= keyword (the adapter protocol's edge pattern, "
                         "docs/adapters.md): this adapter cannot be asked for edge values"};
  }
  try {
    py::object x = edge ? adapter_.attr("make")(shp, py::make_tuple(dtype.code, dtype.bits),
                                                py::make_tuple(static_cast<int>(where.device_type), where.device_id),
                                                layout, py::arg("read_only") = read_only, py::arg("values") = "edge")
                        : adapter_.attr("make")(shp, py::make_tuple(dtype.code, dtype.bits),
                                                py::make_tuple(static_cast<int>(where.device_type), where.device_id),
                                                layout, py::arg("read_only") = read_only);
    // An array the package cannot export at all (no __dlpack__: PyArrow's Tensor before 26, a
    // consumer-only library) is a fact about the package's arrays, not a refusal to judge.
    if (!py::hasattr(x, "__dlpack__"))
      throw NotImplemented{fmt::format("the package's {} arrays have no __dlpack__ method ({} {} {} array)",
                                       py::type::of(x).attr("__qualname__").cast<std::string>(), with_article(layout),
                                       dtype_name(dtype), shape_text(shape))};
    return x;
  } catch (py::error_already_set& e) {
    if (is_instance_of(e, PyExc_NotImplementedError))
      throw NotImplemented{fmt::format("the adapter cannot make {} {} {} array on {}: {}", with_article(layout),
                                       dtype_name(dtype), shape_text(shape),
                                       device_name(where), describe(e))};
    throw;
  }
}

bool PythonSubject::make_takes_values() {
  if (!make_takes_values_) {
    bool takes = false;
    try {
      const py::object params = py::module_::import("inspect").attr("signature")(adapter_.attr("make")).attr("parameters");
      takes = params.contains("values");
      for (const py::handle p : params.attr("values")())
        takes = takes || p.attr("kind").cast<int>() == 4;  // **kwargs (inspect.Parameter.VAR_KEYWORD)
    } catch (py::error_already_set&) {
      takes = false;  // no signature to read (a builtin): not asked
    }
    make_takes_values_ = takes;
  }
  return *make_takes_values_;
}

py::object PythonSubject::from_dlpack(py::handle obj, py::dict kwargs) {
  return adapter_.attr("from_dlpack")(obj, **kwargs);
}

// The load checks (run_load_checks, check_devices, check_producer, check_consumer, declare_capabilities,
// try_plain_import, check_never_lends, check_cpu_refusal) are in load_checks.cpp.

// ---- errors -------------------------------------------------------------------------------

void PythonSubject::set_error(const std::string& message) {
  t_last_error = message;
  t_refused_by_adapter = false;
  t_refusal_not_buffer_error.clear();
}
bool PythonSubject::refused_by_validator() const { return t_refused_by_adapter; }
std::string PythonSubject::refusal_not_buffer_error() const { return t_refusal_not_buffer_error; }
std::optional<uintptr_t> PythonSubject::last_source_address() const { return t_last_source; }
std::string PythonSubject::last_error() { return t_last_error.empty() ? "(no error recorded)" : t_last_error; }
std::string PythonSubject::image_path() const { return image_; }

// ---- producer -----------------------------------------------------------------------------

namespace {
py::dict export_kwargs(const DLPVRequest& req) {
  py::dict kw;
  if (req.stream != DLPV_NO_STREAM) kw["stream"] = req.stream;
  if (req.flags & DLPV_REQ_COPY) kw["copy"] = true;
  if (req.flags & DLPV_REQ_NO_COPY) kw["copy"] = false;
  if (req.target_device.device_type != 0)
    kw["dl_device"] = py::make_tuple(static_cast<int>(req.target_device.device_type), req.target_device.device_id);
  return kw;
}
}  // namespace

void PythonSubject::reuse_sources(bool on) {
  py::gil_scoped_acquire gil;
  reuse_ = on;
  source_key_.clear();
  source_ = py::object();
}

void PythonSubject::settle() {
  py::gil_scoped_acquire gil;
  if (!adapter_ || !py::hasattr(adapter_, "synchronize")) return;
  try {
    adapter_.attr("synchronize")();
  } catch (py::error_already_set&) {
    // A queue that cannot be waited on leaves the reading as it is (the error is cleared with
    // the exception); the next call into the library reports whatever is wrong with it.
  }
}

// The case's unreachable Python objects are collected now. Cheap: the objects alive when the
// package had loaded were frozen out of the collector's reach (run_load_checks()), so a full collection
// walks only what cases made since.
void PythonSubject::after_case() {
  py::gil_scoped_acquire gil;
  if (PyErr_Occurred()) PyErr_Clear();  // left by a deleter outside any call: judged by DEL-09 where a case looks
  PyGC_Collect();
  if (PyErr_Occurred()) PyErr_Clear();
}

// The array an export request is asked of: made by the adapter (on the subject's own device for
// a plain host request), or while reuse_sources is on, the previous one for the same request.
py::object PythonSubject::source_for(const DLPVRequest& req, const std::vector<int64_t>& shape) {
  const DLDevice where = case_device(*this, req.device);
  // Element 0's address as the package states it (last_source_address): read when an array is
  // made, never once per export of a reused one (a heap measurement's cycles ask nothing else
  // of the package).
  auto made = [&] {
    return make(shape, req.dtype, layout_name(req.layout), (req.flags & DLPV_REQ_READ_ONLY) != 0, where,
                (req.flags & DLPV_REQ_EDGE_VALUES) ? DLPV_VALUES_EDGE : DLPV_VALUES_PLAIN);
  };
  if (!reuse_) {
    py::object x = made();
    t_last_source = library_address(x);
    return x;
  }
  const std::string key = fmt::format("{} {} {} {} {}:{}", shape_text(shape),
                                      dtype_name(req.dtype), layout_name(req.layout), req.flags,
                                      static_cast<int>(where.device_type), where.device_id);
  if (!source_ || key != source_key_) {
    source_ = made();
    source_key_ = key;
    source_address_ = library_address(source_);
  }
  t_last_source = source_address_;
  return source_;
}

namespace {
/// One export, as a consumer takes it: `x.__dlpack__(...)` on the request's source (`source`:
/// PythonSubject::source_for), the capsule's name checked against the struct asked for, then
/// renamed (the deleter is now ours) and its pointer handed out in `out`. Errors go through
/// `error` (PythonSubject::set_error). Shared by export_versioned and export_legacy.
template <class Source, class Error>
int export_capsule(const DLPVRequest& req, bool versioned, Source&& source, Error&& error, void** out) {
  py::gil_scoped_acquire gil;
  // An error a previous export's deleter left set (python.deleter.no_python_error judges that)
  // is not this request's: it would surface in the next call into Python.
  if (PyErr_Occurred()) PyErr_Clear();
  try {
    std::vector<int64_t> shape(req.shape, req.shape + req.ndim);
    py::object x;
    t_last_source.reset();
    try {
      x = source(req, shape);
    } catch (py::error_already_set& e) {
      // The adapter's make() failed before anything was asked of __dlpack__: the package cannot
      // make this array here (a skip naming why), never a refusal of the export; running out of
      // memory there is no answer to any request (an error).
      if (is_failure_not_refusal(e)) {
        error("making the source array failed before any export: " + describe(e));
        return DLPV_ERROR;
      }
      throw PythonSubject::NotImplemented{fmt::format("the package cannot make {} {} {} array here: the adapter's "
                                                      "make() raised {}", with_article(layout_name(req.layout)),
                                                      dtype_name(req.dtype), shape_text(shape), describe(e))};
    }
    py::dict kw = export_kwargs(req);
    if (versioned) kw["max_version"] = version_tuple(req.max_version);
    py::object cap = x.attr("__dlpack__")(**kw);
    const std::string name = capsule_name(cap);
    const char* want = versioned ? kVersionedName : kLegacyName;
    if (name != want) {
      error(fmt::format("__dlpack__ returned {} where a '{}' capsule was asked for",
                        name.empty() ? "a non-capsule" : "a '" + name + "' capsule", want));
      return DLPV_UNSUPPORTED;
    }
    void* p = capsule_pointer(cap);
    if (!p) {
      error("the capsule holds a NULL pointer");
      return DLPV_ERROR;
    }
    // Take ownership exactly as a consumer does: rename, then the deleter is ours.
    if (PyCapsule_SetName(cap.ptr(), versioned ? kUsedVersionedName : kUsedLegacyName) != 0)
      throw py::error_already_set();
    *out = p;
    return DLPV_OK;
  } catch (const PythonSubject::NotImplemented& n) {
    error(n.reason);
    t_refused_by_adapter = true;
    return DLPV_UNSUPPORTED;
  } catch (py::error_already_set& e) {
    // An exception is a refusal of this request (its type is judged by ERR-01/02), except a
    // failure no request can be refused with: out of memory, an interpreter error (ERR-02).
    const bool failed = is_failure_not_refusal(e);
    error("__dlpack__ raised " + describe(e) + (failed ? ": a failure, not a refusal (ERR-02)" : ""));
    if (!failed && !e.matches(PyExc_BufferError)) t_refusal_not_buffer_error = describe(e);
    return failed ? DLPV_ERROR : DLPV_UNSUPPORTED;
  } catch (const std::exception& e) {
    error(e.what());
    return DLPV_ERROR;
  }
}
}  // namespace

int PythonSubject::export_versioned(const DLPVRequest& req, DLManagedTensorVersioned** out) {
  void* p = nullptr;
  const int rc = export_capsule(
      req, true, [this](const DLPVRequest& r, const std::vector<int64_t>& s) { return source_for(r, s); },
      [this](const std::string& m) { set_error(m); }, &p);
  if (rc == DLPV_OK) *out = static_cast<DLManagedTensorVersioned*>(p);
  return rc;
}
int PythonSubject::export_legacy(const DLPVRequest& req, DLManagedTensor** out) {
  void* p = nullptr;
  const int rc = export_capsule(
      req, false, [this](const DLPVRequest& r, const std::vector<int64_t>& s) { return source_for(r, s); },
      [this](const std::string& m) { set_error(m); }, &p);
  if (rc == DLPV_OK) *out = static_cast<DLManagedTensor*>(p);
  return rc;
}

// ---- consumer -----------------------------------------------------------------------------

int PythonSubject::import_common(void* managed, bool versioned, void** out_array) {
  py::gil_scoped_acquire gil;
  try {
    ProducerScript cfg;
    cfg.managed = managed;
    cfg.versioned = versioned;
    cfg.capsule_name = versioned ? kVersionedName : kLegacyName;
    cfg.require_max_version = versioned;
    // Only the version prefix is safe to read before the version is known (VER-03).
    if (versioned) {
      auto* v = static_cast<DLManagedTensorVersioned*>(managed);
      if (v->version.major == 1) cfg.device = v->dl_tensor.device;
    } else {
      cfg.device = static_cast<DLManagedTensor*>(managed)->dl_tensor.device;
    }
    py::object producer = make_producer(cfg);
    py::object array = from_dlpack(producer);
    *out_array = array.release().ptr();
    return DLPV_OK;
  } catch (py::error_already_set& e) {
    set_error("from_dlpack raised " + describe(e));
    return is_instance_of(e, PyExc_BufferError) ? DLPV_UNSUPPORTED : DLPV_ERROR;
  } catch (const std::exception& e) {
    set_error(e.what());
    return DLPV_ERROR;
  }
}

int PythonSubject::import_versioned(DLManagedTensorVersioned* t, void** out) {
  return import_common(t, true, out);
}
int PythonSubject::import_legacy(DLManagedTensor* t, void** out) { return import_common(t, false, out); }

int PythonSubject::read_array(void* array, void* dst, size_t nbytes) {
  py::gil_scoped_acquire gil;
  try {
    py::object b = adapter_.attr("to_bytes")(py::handle(static_cast<PyObject*>(array)));
    std::string bytes = py::bytes(b).cast<std::string>();
    if (bytes.size() != nbytes) {
      set_error(fmt::format("to_bytes returned {} bytes, {} expected", bytes.size(), nbytes));
      return DLPV_ERROR;
    }
    std::memcpy(dst, bytes.data(), nbytes);
    return DLPV_OK;
  } catch (py::error_already_set& e) {
    set_error("to_bytes raised " + describe(e));
    // NotImplementedError: the adapter cannot read this back (an adapter limitation, a skip).
    return is_instance_of(e, PyExc_NotImplementedError) ? DLPV_UNSUPPORTED : DLPV_ERROR;
  } catch (const std::exception& e) {
    set_error(e.what());
    return DLPV_ERROR;
  }
}

int PythonSubject::is_writable(void* array) {
  py::gil_scoped_acquire gil;
  try {
    py::object w = adapter_.attr("is_writable")(py::handle(static_cast<PyObject*>(array)));
    if (w.is_none()) return -1;
    return w.cast<bool>() ? 1 : 0;
  } catch (...) {
    return -1;
  }
}

void PythonSubject::release_array(void* array) {
  py::gil_scoped_acquire gil;
  try {
    Py_XDECREF(static_cast<PyObject*>(array));
    PyGC_Collect();
  } catch (py::error_already_set& e) {
    set_error("releasing the array raised " + describe(e));
  } catch (...) {
  }
}

// ---- exchange API -------------------------------------------------------------------------

const DLPackExchangeAPI* PythonSubject::exchange_api() {
  py::gil_scoped_acquire gil;
  try {
    if (!exchange_type_) return nullptr;
    py::object a = exchange_type_.attr("__dlpack_c_exchange_api__");
    if (capsule_name(a) != kExchangeName) return nullptr;
    auto* api = static_cast<const DLPackExchangeAPI*>(capsule_pointer(a));
    if (api && image_.empty()) {
      Dl_info where{};
      if (dladdr(api, &where) != 0 && where.dli_fname) image_ = where.dli_fname;
      else image_ = info_.path;
    }
    return api;
  } catch (py::error_already_set& e) {
    set_error("looking up __dlpack_c_exchange_api__ raised " + describe(e));
    return nullptr;
  }
}

// ---- access from cases and the loader -----------------------------------------------------

PythonSubject& python_subject(CaseContext& ctx) {
  auto* s = dynamic_cast<PythonSubject*>(&ctx.subject());
  if (!s) ctx.skip("a Python-protocol case needs a Python subject");
  return *s;
}

std::unique_ptr<Subject> load_python_subject(const std::string& spec, int index) {
  py::gil_scoped_acquire gil;
  try {
    load_step("import");
    py::module_ adapters = py::module_::import("validator.adapters");
    py::object adapter = adapters.attr("resolve")(spec);
    auto subject = std::make_unique<PythonSubject>(adapter, spec, index);
    // Everything the package created at import is now long-lived: move it out of the cyclic
    // collector's way, so that the gc.collect() calls cases make (to run deleters
    // deterministically) scan only what the cases create. With torch, TensorFlow and Paddle
    // loaded together a full collection otherwise costs tens of milliseconds.
    PyGC_Collect();
    gc_freeze();
    return subject;
  } catch (py::error_already_set& e) {
    throw SubjectLoadError{fmt::format("cannot load Python subject '{}': {}", spec, describe(e))};
  } catch (const PythonSubject::NotImplemented& n) {
    throw SubjectLoadError{n.reason};
  }
}

}  // namespace dlpv::python
