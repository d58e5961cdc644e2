// cases/python/xapi.cpp: python.xapi.*: the C exchange API through Python. Producer side: the
// package's own __dlpack_c_exchange_api__ (XAPI-01/02/03/10/12/14/18). Consumer side: the
// package's from_dlpack fed by probe types carrying instrumented tables (XAPI-07/09/11/19),
// with a metaclass counting type-level lookups (checklist T-FAKE).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/py_helpers.hpp"

namespace dlpv::py_shim {
namespace {

const std::vector<int64_t> kShape{3, 4};
constexpr const char* kAttr = "__dlpack_c_exchange_api__";
constexpr const char* kAttrV12 = "__c_dlpack_exchange_api__";

py::object type_of(py::handle x) {
  return py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr())));
}

// ---- producer side ------------------------------------------------------------------------

// The package's major-1 table, or a skip saying why there is none to test.
const DLPackExchangeAPI* table_of(CaseContext& ctx, py::handle x) {
  py::object type = type_of(x);
  if (!py::hasattr(type, kAttr))
    ctx.skip(py::hasattr(type, kAttrV12)
                 ? "only the superseded DLPack 1.2 attribute __c_dlpack_exchange_api__ is present "
                   "(python.xapi.capsule reports it)"
                 : "the array type has no __dlpack_c_exchange_api__ (optional, XAPI-01)");
  py::object a = type.attr(kAttr);
  if (capsule_name(a) != kExchangeName || !capsule_pointer(a))
    ctx.skip("__dlpack_c_exchange_api__ is not a 'dlpack_exchange_api' capsule (python.xapi.capsule reports it)");
  const auto* h = &static_cast<const DLPackExchangeAPI*>(capsule_pointer(a))->header;
  for (int hops = 0; h && hops < 16; ++hops, h = h->prev_api)
    if (h->version.major == 1) return reinterpret_cast<const DLPackExchangeAPI*>(h);
  ctx.skip("the table chain offers no major-1 table (exchange_api.header.version reports it)");
}

void type_attribute(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::object type = type_of(x);
    const bool on_type = py::hasattr(type, kAttr);
    const bool on_instance = py::hasattr(x, kAttr);
    if (!on_type && !on_instance)
      ctx.skip(py::hasattr(type, kAttrV12)
                   ? "no __dlpack_c_exchange_api__; only the DLPack 1.2 int attribute (python.xapi.capsule)"
                   : "the array type has no __dlpack_c_exchange_api__: the C exchange API is optional (XAPI-01)");
    ctx.check_as(Severity::may, true, "XAPI-01", "the package offers __dlpack_c_exchange_api__");
    ctx.note("XAPI-01: __dlpack_c_exchange_api__ present");
    if (!ctx.check(on_type, "XAPI-02", "__dlpack_c_exchange_api__ is a class attribute", "on the type",
                   "only on instances"))
      return;
    py::object from_type = type.attr(kAttr);
    py::object from_instance = x.attr(kAttr);
    ctx.check(from_type.is(from_instance), "XAPI-02",
              "the instance lookup returns the very object the type holds", "the same object",
              py::repr(from_type).cast<std::string>() + " vs " + py::repr(from_instance).cast<std::string>());
  });
}

DLPV_CASES {
  Declare("python.xapi.type_attribute",
          "__dlpack_c_exchange_api__ (optional) is a class attribute, the same object from instances")
      .must({"XAPI-02", "XAPI-01"}).python()
      .proven_by({"xapi_on_instance"})
      .run(type_attribute);
}

void capsule_form(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::object type = type_of(x);
    if (!py::hasattr(type, kAttr)) {
      if (!py::hasattr(type, kAttrV12)) ctx.skip("the array type has no __dlpack_c_exchange_api__ (optional, XAPI-01)");
      py::object v12 = type.attr(kAttrV12);
      ctx.check_as(Severity::should, false, "XAPI-03",
                   "DLPack 1.3 names the attribute __dlpack_c_exchange_api__ and makes it a capsule",
                   "__dlpack_c_exchange_api__ capsule",
                   "only __c_dlpack_exchange_api__ = " + py::repr(v12).cast<std::string>() + " (the DLPack 1.2 int)");
      return;
    }
    py::object a = type.attr(kAttr);
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

struct Fields {
  DLDevice device{};
  DLDataType dtype{};
  std::vector<int64_t> shape, strides;
  uint64_t flags = 0;
  uintptr_t address = 0;
};

Fields fields_of(const DLTensor& t, uint64_t flags) {
  Fields f;
  f.device = t.device;
  f.dtype = t.dtype;
  f.shape.assign(t.shape, t.shape + t.ndim);
  int64_t acc = 1;
  f.strides.resize(f.shape.size());
  for (size_t i = f.shape.size(); i-- > 0;) {  // NULL strides (legal up to 1.1) mean compact
    f.strides[i] = t.strides ? t.strides[i] : acc;
    acc *= f.shape[i];
  }
  f.flags = flags;
  f.address = reinterpret_cast<uintptr_t>(element0(t));
  return f;
}

// "" when equal (the address only if `address`), else the first difference.
std::string diff_fields(const Fields& a, const Fields& b, bool address) {
  if (a.device.device_type != b.device.device_type || a.device.device_id != b.device.device_id)
    return "device " + device_name(a.device) + " vs " + device_name(b.device);
  if (!dtype_equal(a.dtype, b.dtype)) return "dtype " + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype);
  if (a.shape != b.shape)
    return "shape " + shape_text(a.shape.data(), static_cast<int32_t>(a.shape.size())) + " vs " +
           shape_text(b.shape.data(), static_cast<int32_t>(b.shape.size()));
  if (a.strides != b.strides)
    return "strides " + shape_text(a.strides.data(), static_cast<int32_t>(a.strides.size())) + " vs " +
           shape_text(b.strides.data(), static_cast<int32_t>(b.strides.size()));
  if (a.flags != b.flags) return fmt::format("flags {:#x} vs {:#x}", a.flags, b.flags);
  if (address && a.address != b.address) return fmt::format("data {:#x} vs {:#x}", a.address, b.address);
  return "";
}

// Arrays to compare the two export routes on: contiguous, strided, read-only (if makeable).
struct SampleArray {
  std::string what;
  uint32_t layout;
  py::object x;
};
std::vector<SampleArray> sample_arrays(PythonSubject& ps) {
  std::vector<SampleArray> out;
  out.push_back({"a contiguous float32 3x4 array", DLPV_LAYOUT_CONTIGUOUS, ps.make(kShape, kF32)});
  for (auto [what, layout, ro] : {std::tuple<const char*, uint32_t, bool>{"a strided float32 view", DLPV_LAYOUT_STRIDED, false},
                                  {"a read-only float32 array", DLPV_LAYOUT_CONTIGUOUS, true}}) {
    try {
      out.push_back({what, layout, ps.make(kShape, kF32, layout_name(layout), ro)});
    } catch (const PythonSubject::NotImplemented&) {
    }
  }
  return out;
}

// A tensor managed_tensor_from_py_object_no_sync handed back goes through the inspector like
// any export: fields, device, strides and the elements against the pattern.
void inspect_exchange_export(CaseContext& ctx, PythonSubject& ps, const DLManagedTensorVersioned& m,
                             const std::string& what, uint32_t layout) {
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = kF32;
  want.shape = kShape;
  want.device = ps.home_device();
  want.layout = layout;
  InspectOptions opt;
  opt.versioned = true;
  opt.version = m.version;
  std::vector<Finding> findings;
  inspect_tensor(m.dl_tensor, want, opt, findings);
  for (Finding& f : findings) f.message = "exchange export of " + what + ": " + f.message;
  record(ctx, findings);
}

// Both routes for each sample; `address` also compares the data address.
void compare_routes(CaseContext& ctx, PythonSubject& ps, const char* req, bool address) {
  py::object x0 = ps.make(kShape, kF32);
  const DLPackExchangeAPI* api = table_of(ctx, x0);
  if (!api->managed_tensor_from_py_object_no_sync) {
    ctx.check(false, req, "managed_tensor_from_py_object_no_sync is non-NULL (required)", "a function", "NULL");
    return;
  }
  int compared = 0;
  for (auto& [what, layout, x] : sample_arrays(ps)) {
    DLManagedTensorVersioned* m = nullptr;
    const int rc = api->managed_tensor_from_py_object_no_sync(x.ptr(), &m);
    if (rc != 0 || !m) {
      std::string err = "no Python exception set";
      if (PyErr_Occurred()) err = describe(py::error_already_set());
      ctx.check(false, req, "managed_tensor_from_py_object_no_sync exports " + what, "0 and a tensor",
                fmt::format("return {}: {}", rc, err));
      continue;
    }
    if (address) inspect_exchange_export(ctx, ps, *m, what, layout);
    Call c = call_dlpack(x, kw_max(1, 3));
    if (c.raised || capsule_name(c.value) != kVersionedName) {
      if (m->deleter) m->deleter(m);
      ctx.note("__dlpack__(max_version=(1, 3)) of " + what + " " + c.what() + ": nothing to compare with");
      continue;
    }
    Taken t = take(ctx, c.value, "CAP-01");
    ++compared;
    const Fields a = fields_of(m->dl_tensor, m->flags);
    const Fields b = fields_of(*t.tensor(), static_cast<DLManagedTensorVersioned*>(t.p)->flags);
    const std::string diff = diff_fields(a, b, address);
    ctx.check(diff.empty(), req,
              "the exchange-API export of " + what + " matches __dlpack__(max_version=(1, 3))",
              "identical fields", "exchange vs __dlpack__: " + diff);
    if (address)
      ctx.check(m->version.major == 1, req, "the exported tensor carries version 1.x", "1.x",
                fmt::format("{}.{}", m->version.major, m->version.minor));
    if (m->deleter) m->deleter(m);
    t.release();
  }
  if (compared == 0 && std::string(req) == "XAPI-18")
    ctx.skip("__dlpack__(max_version=(1, 3)) gave no versioned capsule to compare the exchange API with");
}

void from_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    compare_routes(ctx, ps, "XAPI-10", true);
    py::object x0 = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x0);
    if (!api->managed_tensor_from_py_object_no_sync) return;
    py::object a = ps.adapter();
    if (!py::hasattr(a, "unexportable")) return;
    for (auto item : py::list(a.attr("unexportable")())) {
      py::tuple t = py::reinterpret_borrow<py::tuple>(item);
      const std::string desc = t[0].cast<std::string>();
      // The table serves only instances of the type it came from (XAPI-20).
      if (!type_of(t[1]).is(type_of(x0))) continue;
      DLManagedTensorVersioned* m = nullptr;
      const int rc = api->managed_tensor_from_py_object_no_sync(t[1].ptr(), &m);
      if (rc == 0) {
        ctx.check(false, "XAPI-10", "managed_tensor_from_py_object_no_sync refuses " + desc, "-1 and BufferError",
                  "0 (exported it)");
        if (m && m->deleter) m->deleter(m);
        continue;
      }
      if (!PyErr_Occurred()) {
        ctx.check(false, "XAPI-10", "refusing " + desc + " returns non-zero with a Python exception set",
                  "an exception set", "no exception set");
        continue;
      }
      py::error_already_set e;
      const std::string type = describe(e);
      // dlpack.h (DLPackManagedTensorFromPyObjectNoSync): "If the data cannot be described using
      // DLPack this should be a BufferError if possible." Should: another type is a warning.
      ctx.check_as(Severity::should, type.rfind("BufferError", 0) == 0, "XAPI-10",
                   "refusing " + desc + " sets a BufferError (\"should be a BufferError if possible\")", "BufferError",
                   type);
    }
  });
}

DLPV_CASES {
  Declare("python.xapi.from_py_object",
          "managed_tensor_from_py_object_no_sync matches __dlpack__ and refuses with BufferError")
      .must({"XAPI-10"}).python()
      .proven_by({"xapi_from_disagrees", "xapi_producer_functions"})
      .run(from_py_object);
}

// XAPI-15 on CUDA: current_work_stream(kDLCUDA, 0) is the stream the library computes on,
// the one its adapter names (current_stream(), as for STRM-07).
void current_work_stream_cuda(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    const DLPackExchangeAPI* api = table_of(ctx, x);
    const long long current = current_cuda_stream(ctx, ps);
    if (!api->current_work_stream) ctx.skip("current_work_stream is NULL (exchange_api.table.required_pointers reports it)");
    void* stream = reinterpret_cast<void*>(uintptr_t{0xdeadbeef});
    const int rc = api->current_work_stream(kDLCUDA, 0, &stream);
    if (!ctx.check(rc == 0, "XAPI-15", "current_work_stream(kDLCUDA, 0) succeeds", "0", std::to_string(rc))) return;
    const auto want = static_cast<uintptr_t>(current);
    ctx.check(reinterpret_cast<uintptr_t>(stream) == want, "XAPI-15",
              "current_work_stream(kDLCUDA, 0) is the library's current CUDA stream", fmt::format("{:#x}", want),
              fmt::format("{}", stream));
  });
}

DLPV_CASES {
  Declare("python.xapi.current_work_stream.cuda",
          "current_work_stream(kDLCUDA, 0) is the library's current CUDA stream")
      .must({"XAPI-15"}).python()
      .proven_by({"xapi_stream_null"})
      .run(current_work_stream_cuda);
}

void agrees_with_dlpack(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) { compare_routes(ctx, ps, "XAPI-18", false); });
}

DLPV_CASES {
  Declare("python.xapi.agrees_with_dlpack", "exchange-API and __dlpack__ exports agree field by field")
      .should({"XAPI-18"}).python()
      .proven_by({"xapi_from_disagrees"})
      .run(agrees_with_dlpack);
}

void dltensor_from_py_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
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

// ---- consumer side: instrumented tables -----------------------------------------------------

struct XCounts {
  int from = 0, dlt = 0, to = 0, alloc = 0, stream = 0, trap = 0;
  int calls() const { return from + dlt + to + alloc + stream + trap; }
};
XCounts g_x;

Probe* inner_probe(void* obj) {
  py::object inner = py::handle(static_cast<PyObject*>(obj)).attr("_p");
  return &probe_of(inner);
}

int x_alloc(DLTensor*, DLManagedTensorVersioned**, void* ctx, void (*set_error)(void*, const char*, const char*)) {
  ++g_x.alloc;
  if (set_error) set_error(ctx, "NotImplementedError", "the dlpack-validate probe table allocates nothing");
  return -1;
}

// The versioned tensor the probe behind `obj` holds; NULL with a Python error set otherwise.
DLManagedTensorVersioned* probe_tensor(void* obj) {
  try {
    const ProbeConfig& c = inner_probe(obj)->config();
    if (c.managed && c.versioned) return static_cast<DLManagedTensorVersioned*>(c.managed);
    PyErr_SetString(PyExc_BufferError, "the probe holds no versioned tensor");
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

int x_from(void* obj, DLManagedTensorVersioned** out) {
  ++g_x.from;
  DLManagedTensorVersioned* m = probe_tensor(obj);
  if (!m) return -1;
  *out = m;
  return 0;
}

int x_to(DLManagedTensorVersioned*, void**) {
  ++g_x.to;
  PyErr_SetString(PyExc_NotImplementedError, "the dlpack-validate probe table makes no Python objects");
  return -1;
}

int x_dlt(void* obj, DLTensor* out) {
  ++g_x.dlt;
  DLManagedTensorVersioned* m = probe_tensor(obj);
  if (!m) return -1;
  *out = m->dl_tensor;
  return 0;
}

int x_stream(DLDeviceType, int32_t, void** out) {
  ++g_x.stream;
  if (out) *out = nullptr;
  return 0;
}

// Traps: a major-2 table's layout is unknown, so calling through it is a violation.
void trapped() {
  ++g_x.trap;
  PyErr_SetString(PyExc_RuntimeError, "dlpack-validate trap: a function of a major-2 exchange table was called");
}
int trap_alloc(DLTensor*, DLManagedTensorVersioned**, void*, void (*)(void*, const char*, const char*)) {
  trapped();
  return -1;
}
int trap_from(void*, DLManagedTensorVersioned**) { trapped(); return -1; }
int trap_to(DLManagedTensorVersioned*, void**) { trapped(); return -1; }
int trap_dlt(void*, DLTensor*) { trapped(); return -1; }
int trap_stream(DLDeviceType, int32_t, void**) { trapped(); return -1; }

DLPackExchangeAPI g_good = {{{1, 3}, nullptr}, x_alloc, x_from, x_to, x_dlt, x_stream};
DLPackExchangeAPI g_null_dlt = {{{1, 3}, nullptr}, x_alloc, x_from, x_to, nullptr, x_stream};
DLPackExchangeAPI g_major2_alone = {{{2, 0}, nullptr}, trap_alloc, trap_from, trap_to, trap_dlt, trap_stream};
DLPackExchangeAPI g_major2_prev = {{{2, 0}, &g_good.header}, trap_alloc, trap_from, trap_to, trap_dlt, trap_stream};

// A fresh probe type (a plain Python class whose metaclass counts type-level lookups of the
// attribute; instance lookups are counted too) carrying `table`, or no attribute at all.
struct XFeed {
  std::unique_ptr<MadeTensor> made;
  py::object obj;
  py::dict counts;
  Call result;
  XCounts table;
  XFeed() = default;
  XFeed(XFeed&&) = default;
  XFeed& operator=(XFeed&&) = default;
  ~XFeed() {
    if (made && made->deleter_calls() == 0) (void)made.release();
  }
  int type_lookups() const { return counts["type"].cast<int>(); }
  int instance_lookups() const { return counts["instance"].cast<int>(); }
  bool used() const { return type_lookups() + instance_lookups() + table.calls() > 0; }
  void settle(CaseContext& ctx) {
    result.value = py::none();
    obj = py::none();
    gc_collect(ctx);
  }
};

const char* kProbeTypeSource = R"(
def make_probe_type(capsule, counts):
    class CountingMeta(type):
        def __getattribute__(cls, name):
            if name == "__dlpack_c_exchange_api__":
                counts["type"] += 1
            return type.__getattribute__(cls, name)

    class ExchangeProbe(metaclass=CountingMeta):
        def __init__(self, inner):
            self._p = inner
        def __getattribute__(self, name):
            if name == "__dlpack_c_exchange_api__":
                counts["instance"] += 1
            return object.__getattribute__(self, name)
        def __dlpack__(self, **kwargs):
            return object.__getattribute__(self, "_p").__dlpack__(**kwargs)
        def __dlpack_device__(self):
            return object.__getattribute__(self, "_p").__dlpack_device__()

    if capsule is not None:
        type.__setattr__(ExchangeProbe, "__dlpack_c_exchange_api__", capsule)
    return ExchangeProbe
)";

XFeed xfeed(CaseContext& ctx, PythonSubject& ps, DLPackExchangeAPI* table) {
  ctx.phase("setup");
  XFeed f;
  MadeSpec spec;
  // The table hands out versioned tensors only; __dlpack__ gives what the consumer speaks.
  const bool v = ps.facts().consumer_versioned;
  f.made = MadeTensor::make(spec, v);
  if (!f.made) ctx.harness_error("could not build the test tensor");
  ProbeConfig cfg;
  cfg.managed = v ? static_cast<void*>(f.made->versioned()) : static_cast<void*>(f.made->legacy());
  cfg.versioned = v;
  cfg.capsule_name = v ? kVersionedName : kLegacyName;
  cfg.destructor_deletes = true;
  py::dict ns;
  py::exec(kProbeTypeSource, ns);
  f.counts["type"] = 0;
  f.counts["instance"] = 0;
  py::object cap = table ? py::object(py::capsule(static_cast<void*>(table), kExchangeName)) : py::object(py::none());
  py::object type = ns["make_probe_type"](cap, f.counts);
  f.obj = type(make_probe(cfg));
  g_x = XCounts{};
  ctx.phase("import");
  f.result = attempt([&] { return ps.from_dlpack(f.obj); });
  f.table = g_x;
  return f;
}

std::string counts_text(const XFeed& f) {
  return fmt::format("type lookups {}, instance lookups {}, from_py_object {}, dltensor_from_py_object {}, traps {}",
                     f.type_lookups(), f.instance_lookups(), f.table.from, f.table.dlt, f.table.trap);
}

// Skip unless the consumer looks at the exchange API at all (numpy, torch: never).
void require_exchange_consumer(CaseContext& ctx, PythonSubject& ps) {
  XFeed f = xfeed(ctx, ps, &g_good);
  const bool used = f.used();
  const std::string result = f.result.what();
  f.settle(ctx);
  if (!used)
    ctx.skip("the consumer never looks at __dlpack_c_exchange_api__ (it imports through __dlpack__: " + result +
             "), so it does not use the C exchange API");
}

void consumer_major_check(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    require_exchange_consumer(ctx, ps);
    {
      XFeed f = xfeed(ctx, ps, &g_major2_alone);
      ctx.check(f.table.trap == 0, "XAPI-07", "no function of a major-2 table (no prev_api) is called",
                "0 trap calls", counts_text(f));
      if (f.result.raised) ctx.note("with only a major-2 table the import raised " + f.result.text);
      f.settle(ctx);
    }
    XFeed f = xfeed(ctx, ps, &g_major2_prev);
    ctx.check(f.table.trap == 0, "XAPI-07", "no function of a major-2 table is called (prev_api offers major 1)",
              "0 trap calls", counts_text(f));
    ctx.check_as(Severity::should, f.table.from + f.table.dlt > 0, "XAPI-07",
                 "the consumer walks prev_api to the major-1 table instead of falling back to __dlpack__",
                 "the major-1 table used", counts_text(f));
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.xapi.consumer.major_check",
          "the consumer never calls a major-2 table and walks prev_api to major 1")
      .must({"XAPI-07"}).python()
      .needs({"import_legacy"}).proven_by({"consumer_xapi_no_major_check"})
      .run(consumer_major_check);
}

void consumer_null_optional(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    require_exchange_consumer(ctx, ps);
    XFeed f = xfeed(ctx, ps, &g_null_dlt);
    ctx.check(!f.result.raised, "XAPI-09",
              "a table whose optional dltensor_from_py_object_no_sync is NULL still imports (no crash)", "an array",
              f.result.what());
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.xapi.consumer.null_optional", "a NULL dltensor_from_py_object_no_sync does not crash the consumer")
      .should({"XAPI-09"}).python()
      .needs({"import_legacy"}).proven_by({"consumer_xapi_no_null_check"})
      .run(consumer_null_optional);
}

void consumer_owns(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    require_exchange_consumer(ctx, ps);
    XFeed f = xfeed(ctx, ps, &g_good);
    if (f.table.from == 0)
      ctx.skip("the consumer did not call managed_tensor_from_py_object_no_sync (" + counts_text(f) + ")");
    if (!ctx.check(!f.result.raised, "XAPI-11", "the import through the table succeeds", "an array", f.result.what()))
      return;
    gc_collect(ctx);
    ctx.check(f.made->deleter_calls() == 0, "XAPI-11", "the tensor is not deleted while the imported array lives",
              "0 calls", fmt::format("{} call(s)", f.made->deleter_calls()));
    ctx.phase("release");
    f.settle(ctx);
    {
      py::gil_scoped_release nogil;
      await_calls([&] { return f.made->deleter_calls(); }, 1);
    }
    ctx.check(f.made->deleter_calls() == 1, "XAPI-11",
              "the consumer owns the tensor from managed_tensor_from_py_object_no_sync: deleter once after release",
              "1 call", fmt::format("{} call(s)", f.made->deleter_calls()));
  });
}

DLPV_CASES {
  Declare("python.xapi.consumer.owns", "the consumer deletes a table-exported tensor exactly once, after release")
      .must({"XAPI-11"}).python()
      .needs({"import_legacy"}).proven_by({"consumer_xapi_ownership_lookup"})
      .run(consumer_owns);
}

void consumer_type_lookup(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    require_exchange_consumer(ctx, ps);
    XFeed f = xfeed(ctx, ps, &g_good);
    ctx.check(f.type_lookups() > 0, "XAPI-19", "the consumer looks __dlpack_c_exchange_api__ up on type(obj)",
              "type-level lookups", counts_text(f));
    ctx.check(f.instance_lookups() == 0, "XAPI-19", "the instance is never asked for the attribute",
              "0 instance lookups", counts_text(f));
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.xapi.consumer.type_lookup", "the consumer looks the table up on the type")
      .should({"XAPI-19"}).python()
      .needs({"import_legacy"}).proven_by({"consumer_xapi_ownership_lookup"})
      .run(consumer_type_lookup);
}

}  // namespace
}  // namespace dlpv::py_shim
