// tests/python/fakearray/_fakearray.cpp: a tiny array library that speaks the DLPack Python
// protocol (DLPack 1.3 producer), written to prove the Python-protocol cases. By default it
// is correct; set_bugs([...]) plants one named bug (a "variant"), each breaking one
// requirement family. Process-global on purpose: every variant runs in its own worker.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/plugin.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace py = pybind11;

namespace {

std::set<std::string> g_bugs;
bool bug(const char* name) { return g_bugs.count(name) != 0; }

/// Data buffer; poisoned when freed so a use after free reads 0xDD, never the pattern.
struct Buffer {
  explicit Buffer(size_t n) : size(n), data(static_cast<unsigned char*>(std::calloc(n ? n : 1, 1))) {}
  ~Buffer() {
    std::memset(data, 0xDD, size);
    std::free(data);
  }
  size_t size;
  unsigned char* data;
};

struct Array {
  std::shared_ptr<Buffer> buf;
  int64_t offset = 0;  // bytes from buf->data to element 0
  std::vector<int64_t> shape, strides;  // strides in elements
  DLDataType dtype{kDLFloat, 32, 1};
  bool read_only = false;
  bool big_endian = false;
  py::object last_capsule = py::none();  // for the same_capsule bug
};

size_t itemsize(const Array& a) { return a.dtype.bits / 8; }
unsigned char* element0(const Array& a) { return a.buf->data + a.offset; }

// ---- producer: managed tensors ------------------------------------------------------------

struct Ctx {
  std::shared_ptr<Buffer> keep;  // the data lives until the deleter runs (DEL-05)
  std::vector<int64_t> shape, strides;
  std::thread::id creator = std::this_thread::get_id();
  PyObject* owner = nullptr;     // deleter_needs_interpreter: a Python reference
};

std::mutex g_live_mutex;
std::set<void*> g_live;  // managed structs not yet deleted (a second call is ignored)

bool retire(void* self) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return g_live.erase(self) == 1;
}

template <class M>
void delete_managed(M* self) {
  auto* ctx = static_cast<Ctx*>(self->manager_ctx);
  if (bug("deleter_thread_affine") && std::this_thread::get_id() != ctx->creator) return;  // leaks
  if (!retire(self)) return;
  if (ctx->owner) {  // deleter_needs_interpreter: touches Python without checking it still exists
    PyGILState_STATE s = PyGILState_Ensure();
    Py_DECREF(ctx->owner);
    PyGILState_Release(s);
  }
  if (bug("deleter_sets_error")) {
    PyGILState_STATE s = PyGILState_Ensure();
    PyErr_SetString(PyExc_RuntimeError, "fakearray deleter failed");
    PyGILState_Release(s);
  }
  delete ctx;
  delete self;
}

template <class M>
M* new_managed(const Array& a, bool copy) {
  auto* m = new M();
  auto* ctx = new Ctx();
  ctx->shape = a.shape;
  ctx->strides = a.strides;
  DLTensor& t = m->dl_tensor;
  if (copy) {
    // A compact copy of the logical elements.
    const size_t es = itemsize(a);
    int64_t n = 1;
    for (int64_t s : a.shape) n *= s;
    auto nb = std::make_shared<Buffer>(static_cast<size_t>(n) * es);
    std::vector<int64_t> idx(a.shape.size(), 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * a.strides[i];
      std::memcpy(nb->data + k * static_cast<int64_t>(es), element0(a) + off * static_cast<int64_t>(es), es);
      for (size_t i = idx.size(); i-- > 0;) {
        if (++idx[i] < a.shape[i]) break;
        idx[i] = 0;
      }
    }
    int64_t acc = 1;
    for (size_t i = a.shape.size(); i-- > 0;) { ctx->strides[i] = acc; acc *= a.shape[i]; }
    ctx->keep = nb;
    t.data = nb->data;
  } else {
    if (!bug("buffer_not_kept")) ctx->keep = a.buf;
    t.data = element0(a);
  }
  int64_t count = 1;
  for (int64_t s : a.shape) count *= s;
  if (count == 0) t.data = nullptr;  // zero-size tensors carry no data pointer (LAYOUT-10)
  t.byte_offset = 0;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.shape.size());
  t.dtype = a.dtype;
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  m->manager_ctx = ctx;
  m->deleter = &delete_managed<M>;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  g_live.insert(m);
  return m;
}

// The capsule destructor: delete only when unconsumed (name still dltensor*).
void capsule_destructor(PyObject* cap) {
  const char* name = PyCapsule_GetName(cap);
  if (!name) { PyErr_Clear(); return; }
  const bool versioned = std::strcmp(name, "dltensor_versioned") == 0 ||
                         (bug("destructor_ignores_used") && std::strcmp(name, "used_dltensor_versioned") == 0);
  const bool legacy = std::strcmp(name, "dltensor") == 0 ||
                      (bug("destructor_ignores_used") && std::strcmp(name, "used_dltensor") == 0);
  if (!versioned && !legacy) return;
  void* p = PyCapsule_GetPointer(cap, name);
  if (!p) { PyErr_Clear(); return; }
  // The struct kind is in the context (a bug may put a versioned struct under "dltensor").
  if (PyCapsule_GetContext(cap)) {
    auto* v = static_cast<DLManagedTensorVersioned*>(p);
    v->deleter(v);
  } else {
    auto* l = static_cast<DLManagedTensor*>(p);
    l->deleter(l);
  }
}

py::object make_capsule(void* p, const char* name, bool versioned) {
  PyObject* cap = PyCapsule_New(p, name, bug("no_destructor") ? nullptr : capsule_destructor);
  if (!cap) throw py::error_already_set();
  if (versioned) PyCapsule_SetContext(cap, reinterpret_cast<void*>(1));
  return py::reinterpret_steal<py::object>(cap);
}

[[noreturn]] void raise(PyObject* type, const std::string& msg) {
  PyErr_SetString(type, msg.c_str());
  throw py::error_already_set();
}

py::object dlpack(py::object self_obj, py::object stream, py::object max_version, py::object dl_device,
                  py::object copy) {
  Array& a = self_obj.cast<Array&>();
  if (bug("same_capsule") && !a.last_capsule.is_none()) {
    const char* n = PyCapsule_GetName(a.last_capsule.ptr());
    if (n && std::strncmp(n, "dltensor", 8) == 0) return a.last_capsule;
  }
  if (bug("no_dl_device_kw") && !dl_device.is_none())
    raise(PyExc_TypeError, "__dlpack__() got an unexpected keyword argument 'dl_device'");
  if (!stream.is_none()) {
    if (!py::isinstance<py::int_>(stream)) {
      if (!bug("accepts_bad_args")) raise(PyExc_TypeError, "stream must be None or an int");
    } else if (!bug("stream_accepted")) {
      raise(PyExc_ValueError, "fakearray lives on the CPU: stream must be None");
    }
  }
  bool versioned = false;
  if (!max_version.is_none()) {
    if (!py::isinstance<py::tuple>(max_version) || py::len(max_version) != 2) {
      if (!bug("accepts_bad_args")) raise(PyExc_TypeError, "max_version must be a (major, minor) tuple");
    } else {
      const int major = max_version.cast<py::tuple>()[0].cast<int>();
      if (major >= 2 && bug("major2_type_error")) raise(PyExc_TypeError, "unsupported max_version");
      versioned = major >= 1 || bug("old_major_versioned");
    }
  } else if (bug("none_gives_versioned")) {
    versioned = true;
  }
  if (!dl_device.is_none()) {
    auto d = dl_device.cast<std::pair<int, int>>();
    if (d != std::pair<int, int>{1, 0} && !bug("dl_device_ignored"))
      raise(PyExc_BufferError, "fakearray can only export to the CPU (1, 0)");
  }
  if (a.big_endian && !bug("exports_big_endian")) raise(PyExc_BufferError, "DLPack only supports native byte order");
  bool do_copy = false;
  if (!copy.is_none()) do_copy = copy.cast<bool>();
  if (bug("copy_true_aliases") && do_copy) do_copy = false;
  if (bug("copy_false_copies") && !copy.is_none() && !copy.cast<bool>()) do_copy = true;
  if (bug("default_copies") && copy.is_none()) do_copy = true;
  if (!versioned && a.read_only && !bug("read_only_legacy_exported"))
    raise(PyExc_BufferError, "cannot export a read-only array as a legacy capsule (no READ_ONLY flag)");

  py::object cap;
  if (versioned) {
    auto* m = new_managed<DLManagedTensorVersioned>(a, do_copy);
    m->version = DLPackVersion{1, 3};
    m->flags = 0;
    if (a.read_only && !bug("no_read_only_flag")) m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
    if (do_copy && !bug("copy_false_copies")) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    if (do_copy && bug("copy_false_copies")) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
    if (bug("deleter_needs_interpreter")) {
      static_cast<Ctx*>(m->manager_ctx)->owner = self_obj.ptr();
      Py_INCREF(self_obj.ptr());
    }
    cap = make_capsule(m, bug("versioned_named_legacy") ? "dltensor" : "dltensor_versioned", true);
  } else {
    auto* m = new_managed<DLManagedTensor>(a, do_copy);
    cap = make_capsule(m, bug("legacy_struct_named_versioned") ? "dltensor_versioned" : "dltensor", false);
  }
  if (bug("same_capsule")) a.last_capsule = cap;  // a cache: hands the capsule out again
  return cap;
}

// ---- construction from compact bytes in one of DESIGN §3's layouts ------------------------

std::shared_ptr<Array> make(std::vector<int64_t> shape, int code, int bits, const std::string& layout,
                            bool read_only, const std::string& data) {
  auto a = std::make_shared<Array>();
  a->dtype = DLDataType{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  a->shape = shape;
  a->read_only = read_only;
  const int64_t es = bits / 8;
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const size_t nd = shape.size();
  std::vector<int64_t> st(nd, 1);
  int64_t acc = 1, extra = 0;
  if (layout == "fortran") {
    for (size_t i = 0; i < nd; ++i) { st[i] = acc; acc *= shape[i]; }
  } else {
    const int64_t step = layout == "strided" ? 2 : 1;
    acc = step;
    for (size_t i = nd; i-- > 0;) { st[i] = acc; acc *= shape[i]; }
    if (layout == "offset") extra = 1;
    if (layout == "broadcast" && nd > 0) st[0] = 0;
    if (layout == "reversed" && nd > 0) st[0] = -st[0];
    if (layout != "contiguous" && layout != "strided" && layout != "offset" && layout != "broadcast" &&
        layout != "reversed")
      throw py::value_error("unknown layout " + layout);
  }
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < nd; ++i) {
    const int64_t reach = (shape[i] > 0 ? shape[i] - 1 : 0) * st[i];
    (reach < 0 ? lo : hi) += reach;
  }
  a->buf = std::make_shared<Buffer>(static_cast<size_t>((hi - lo + 1 + extra) * es));
  a->offset = (extra - lo) * es;
  a->strides = st;
  std::vector<int64_t> idx(nd, 0);
  const int64_t row = nd > 0 && shape[0] > 0 ? n / shape[0] : n;
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t i = 0; i < nd; ++i) off += idx[i] * st[i];
    const int64_t src = layout == "broadcast" ? k % (row ? row : 1) : k;
    std::memcpy(element0(*a) + off * es, data.data() + src * es, static_cast<size_t>(es));
    for (size_t i = nd; i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
  return a;
}

py::bytes to_bytes(const Array& a) {
  const int64_t es = static_cast<int64_t>(itemsize(a));
  int64_t n = 1;
  for (int64_t s : a.shape) n *= s;
  std::string out(static_cast<size_t>(n * es), '\0');
  std::vector<int64_t> idx(a.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * a.strides[i];
    std::memcpy(out.data() + k * es, element0(a) + off * es, static_cast<size_t>(es));
    for (size_t i = idx.size(); i-- > 0;) {
      if (++idx[i] < a.shape[i]) break;
      idx[i] = 0;
    }
  }
  return py::bytes(out);
}

}  // namespace

PYBIND11_MODULE(_fakearray, m) {
  m.doc() = "fakearray: a DLPack test library with plantable bugs";
  m.def("set_bugs", [](const std::vector<std::string>& bugs) { g_bugs = {bugs.begin(), bugs.end()}; });
  m.def("bugs", [] { return std::vector<std::string>(g_bugs.begin(), g_bugs.end()); });
  py::class_<Array, std::shared_ptr<Array>>(m, "Array", py::dynamic_attr())
      .def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__", [](const Array&) {
        return py::make_tuple(1, bug("device_id_wrong") ? 1 : 0);
      })
      .def("data_ptr", [](const Array& a) { return reinterpret_cast<uintptr_t>(element0(a)); })
      .def("to_bytes", &to_bytes)
      .def_property_readonly("writable", [](const Array& a) { return !a.read_only; })
      .def_property_readonly("shape", [](const Array& a) { return a.shape; });
  m.def("make", &make, py::arg("shape"), py::arg("code"), py::arg("bits"), py::arg("layout"),
        py::arg("read_only"), py::arg("data"));
  m.def("make_big_endian", [](int64_t n) {
    auto a = make({n}, kDLFloat, 32, "contiguous", false, std::string(static_cast<size_t>(n) * 4, '\0'));
    a->big_endian = true;
    return a;
  });
}
