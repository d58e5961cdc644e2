// subjects/python/src/bench_routes.cpp: bench routes of Python subjects (built into the Python shim's
// extension module, where it registers itself with dlpv::bench). Every operation is made with
// the GIL held, through the CPython C API, as a C extension consuming DLPack would; during a
// route's measurement the cyclic GC is paused, as Python's timeit does.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/bench.hpp>
#include <fmt/format.h>

#include <memory>

#include <dlpack_validate/python_subject.hpp>

namespace dlpv::python {
namespace {

/// Python references a route holds; released with the GIL, whoever drops the last route.
struct Held {
  std::vector<PyObject*> refs;
  std::string err;
  PyObject* keep(py::object o) {
    refs.push_back(o.release().ptr());
    return refs.back();
  }
  ~Held() {
    py::gil_scoped_acquire gil;
    for (PyObject* o : refs) Py_XDECREF(o);
  }
  /// Takes the Python error in flight into err (GIL held). Returns false for op().
  bool fail(const std::string& what) {
    if (PyErr_Occurred()) {
      py::error_already_set e;
      err = what + ": " + describe(e);
    } else {
      err = what;
    }
    return false;
  }
};

void gil_and_no_gc(const std::function<void()>& body) {
  py::gil_scoped_acquire gil;
  const int was_enabled = PyGC_Disable();
  try {
    body();
  } catch (...) {
    if (was_enabled) PyGC_Enable();
    throw;
  }
  if (was_enabled) PyGC_Enable();
}

std::string why_not(const SubjectInfo& s, const char* need, const char* fallback) {
  if (s.has(need)) return {};
  auto it = s.absent.find(need);
  return it != s.absent.end() && !it->second.empty() ? it->second : std::string(fallback);
}

bench::Route base_route(const char* id, int subject, int peer, std::shared_ptr<Held> held) {
  bench::Route r;
  r.id = id;
  r.subject = subject;
  r.peer = peer;
  r.scope = gil_and_no_gc;
  r.error = [held] { return held->err; };
  return r;
}

/// The consumer's own from_dlpack (numpy.from_dlpack, torch.from_dlpack ...) when the adapter
/// names its module, else the adapter's method. Returns the callable and its display name.
std::pair<py::object, std::string> consumer_entry(PythonSubject& c) {
  py::object adapter = c.adapter();
  if (py::hasattr(adapter, "module_name")) {
    const std::string mod = py::str(adapter.attr("module_name")).cast<std::string>();
    try {
      py::object m = py::module_::import(mod.c_str());
      if (py::hasattr(m, "from_dlpack")) return {m.attr("from_dlpack"), mod + ".from_dlpack"};
    } catch (py::error_already_set&) {
    }
  }
  return {adapter.attr("from_dlpack"), "the adapter's from_dlpack"};
}

std::vector<bench::Route> python_routes(const std::vector<Subject*>& subjects) {
  std::vector<PythonSubject*> py_subjects;
  for (Subject* s : subjects)
    if (auto* p = dynamic_cast<PythonSubject*>(s)) py_subjects.push_back(p);
  std::vector<bench::Route> out;
  if (py_subjects.empty()) return out;
  py::gil_scoped_acquire gil;
  const DLDataType f32{kDLFloat, 32, 1};

  for (PythonSubject* p : py_subjects) {
    const int pi = p->info().index;
    const std::string pname = p->info().name;
    py::object x;
    std::string no_array;
    try {
      x = p->make({16}, f32);
    } catch (const PythonSubject::NotImplemented& n) {
      no_array = n.reason;
    } catch (py::error_already_set& e) {
      no_array = "making a float32[16] array raised " + describe(e);
    }

    // from_dlpack(x) for every consumer, this package included.
    for (PythonSubject* c : py_subjects) {
      auto held = std::make_shared<Held>();
      bench::Route r = base_route("python.from_dlpack", pi, c->info().index, held);
      r.unavailable = no_array.empty() ? why_not(c->info(), "import_legacy", "the package has no consumer") : no_array;
      std::string fn_name = "from_dlpack";
      if (r.unavailable.empty()) {
        auto [fn, name] = consumer_entry(*c);
        fn_name = name;
        PyObject* f = held->keep(fn);
        PyObject* arr = held->keep(x);
        r.op = [f, arr, held]() {
          PyObject* res = PyObject_CallOneArg(f, arr);
          if (!res) return held->fail("from_dlpack raised");
          Py_DECREF(res);  // the import is released here: the producer's deleter runs
          return true;
        };
      }
      r.title = fmt::format("{}(x), x a {} float32[16]; the result is dropped at once (import, then "
                            "the deleter), GIL held, GC paused", fn_name, pname);
      out.push_back(std::move(r));
    }

    // x.__dlpack__(...) and consuming the capsule as a C extension does.
    for (const bool versioned : {true, false}) {
      auto held = std::make_shared<Held>();
      bench::Route r = base_route(versioned ? "python.dunder_dlpack.versioned" : "python.dunder_dlpack.legacy", pi, -1, held);
      r.title = fmt::format("x.__dlpack__({}) + consume the '{}' capsule (rename it, call the deleter, drop "
                            "it), GIL held, GC paused",
                            versioned ? "max_version=(1, 3)" : "", versioned ? kVersionedName : kLegacyName);
      r.unavailable = !no_array.empty() ? no_array
                                        : why_not(p->info(), versioned ? "export_versioned" : "export_legacy",
                                                  "the package does not export this kind of capsule");
      if (r.unavailable.empty()) {
        PyObject* arr = held->keep(x);
        PyObject* method = held->keep(py::str("__dlpack__"));
        PyObject* version = held->keep(py::make_tuple(DLPV_DLPACK_MAJOR, DLPV_DLPACK_MINOR));
        PyObject* kwnames = held->keep(py::make_tuple("max_version"));
        r.op = [=]() {
          PyObject* args[2] = {arr, version};
          PyObject* cap = versioned ? PyObject_VectorcallMethod(method, args, 1, kwnames)
                                    : PyObject_VectorcallMethod(method, args, 1, nullptr);
          if (!cap) return held->fail("__dlpack__ raised");
          const char* want = versioned ? kVersionedName : kLegacyName;
          void* ptr = PyCapsule_GetPointer(cap, want);
          if (!ptr) {
            Py_DECREF(cap);
            return held->fail(fmt::format("__dlpack__ did not return a '{}' capsule", want));
          }
          if (PyCapsule_SetName(cap, versioned ? kUsedVersionedName : kUsedLegacyName) != 0) {
            Py_DECREF(cap);
            return held->fail("renaming the capsule failed");
          }
          call_deleter(ptr, versioned);
          Py_DECREF(cap);
          return true;
        };
      }
      out.push_back(std::move(r));
    }

    // The C exchange API, when the array type has one.
    const DLPackExchangeAPI* api = nullptr;
    std::string no_api = why_not(p->info(), "exchange_api", "the array type has no __dlpack_c_exchange_api__");
    if (no_api.empty()) {
      api = p->exchange_api();
      if (!api) no_api = "__dlpack_c_exchange_api__ gave no table (" + p->last_error() + ")";
      else if (api->header.version.major != 1)
        no_api = fmt::format("exchange API table of major version {} (this harness speaks 1)", api->header.version.major);
    }
    if (no_api.empty() && !no_array.empty()) no_api = no_array;
    {
      auto held = std::make_shared<Held>();
      bench::Route r = base_route("exchange_api.managed_tensor_from_py_object_no_sync", pi, -1, held);
      r.title = "exchange API: managed_tensor_from_py_object_no_sync(x) + the tensor's deleter, GIL held";
      r.unavailable = no_api;
      if (r.unavailable.empty() && !api->managed_tensor_from_py_object_no_sync)
        r.unavailable = "the exchange API table has no managed_tensor_from_py_object_no_sync";
      if (r.unavailable.empty()) {
        PyObject* arr = held->keep(x);
        r.op = [api, arr, held]() {
          DLManagedTensorVersioned* t = nullptr;
          const int rc = api->managed_tensor_from_py_object_no_sync(arr, &t);
          if (rc != 0 || !t) return held->fail(fmt::format("managed_tensor_from_py_object_no_sync returned {}", rc));
          if (t->deleter) t->deleter(t);
          return true;
        };
      }
      out.push_back(std::move(r));
    }
    {
      auto held = std::make_shared<Held>();
      bench::Route r = base_route("exchange_api.dltensor_from_py_object_no_sync", pi, -1, held);
      r.title = "exchange API: dltensor_from_py_object_no_sync(x) (a borrowed view, nothing to delete), GIL held";
      r.unavailable = no_api;
      if (r.unavailable.empty() && !api->dltensor_from_py_object_no_sync)
        r.unavailable = "the exchange API table leaves the optional dltensor_from_py_object_no_sync NULL";
      if (r.unavailable.empty()) {
        PyObject* arr = held->keep(x);
        r.op = [api, arr, held]() {
          DLTensor t{};
          const int rc = api->dltensor_from_py_object_no_sync(arr, &t);
          if (rc != 0) return held->fail(fmt::format("dltensor_from_py_object_no_sync returned {}", rc));
          return true;
        };
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

[[maybe_unused]] const bool g_registered = (bench::register_provider(python_routes), true);

}  // namespace
}  // namespace dlpv::python
