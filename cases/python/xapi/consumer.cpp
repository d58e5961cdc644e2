// cases/python/xapi/consumer.cpp: python.xapi.consumer.*: the package's from_dlpack
// fed by scripted producer types carrying instrumented tables (XAPI-07/09/11/19), with a metaclass counting
// type-level lookups (checklist T-FAKE).
// SPDX-License-Identifier: Apache-2.0
#include <pybind11/eval.h>

#include "python/support/xapi.hpp"

namespace dlpv::python {
namespace {

// ---- consumer side: instrumented tables -----------------------------------------------------

struct XCounts {
  int from = 0, dlt = 0, to = 0, alloc = 0, stream = 0, trap = 0;
  int calls() const { return from + dlt + to + alloc + stream + trap; }
};
XCounts g_x;

ScriptedProducer* inner_producer(void* obj) {
  py::object inner = py::handle(static_cast<PyObject*>(obj)).attr("_p");
  return &producer_of(inner);
}

int x_alloc(DLTensor*, DLManagedTensorVersioned**, void* ctx, void (*set_error)(void*, const char*, const char*)) {
  ++g_x.alloc;
  if (set_error) set_error(ctx, "NotImplementedError", "the dlpack-validate scripted producer's table allocates nothing");
  return -1;
}

// The versioned tensor the scripted producer behind `obj` holds; NULL with a Python error set otherwise.
DLManagedTensorVersioned* producer_tensor(void* obj) {
  try {
    const ProducerScript& c = inner_producer(obj)->config();
    if (c.managed && c.versioned) return static_cast<DLManagedTensorVersioned*>(c.managed);
    PyErr_SetString(PyExc_BufferError, "the scripted producer holds no versioned tensor");
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

int x_from(void* obj, DLManagedTensorVersioned** out) {
  ++g_x.from;
  DLManagedTensorVersioned* m = producer_tensor(obj);
  if (!m) return -1;
  *out = m;
  return 0;
}

int x_to(DLManagedTensorVersioned*, void**) {
  ++g_x.to;
  PyErr_SetString(PyExc_NotImplementedError, "the dlpack-validate scripted producer's table makes no Python objects");
  return -1;
}

int x_dlt(void* obj, DLTensor* out) {
  ++g_x.dlt;
  DLManagedTensorVersioned* m = producer_tensor(obj);
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

// A fresh scripted producer type (a plain Python class whose metaclass counts type-level lookups of the
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

const char* kProducerTypeSource = R"(
def make_producer_type(capsule, counts):
    class CountingMeta(type):
        def __getattribute__(cls, name):
            if name == "__dlpack_c_exchange_api__":
                counts["type"] += 1
            return type.__getattribute__(cls, name)

    class ExchangeProducer(metaclass=CountingMeta):
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
        type.__setattr__(ExchangeProducer, "__dlpack_c_exchange_api__", capsule)
    return ExchangeProducer
)";

XFeed xfeed(CaseContext& ctx, PythonSubject& ps, DLPackExchangeAPI* table) {
  ctx.phase("setup");
  XFeed f;
  MadeSpec spec;
  // The table hands out versioned tensors only; __dlpack__ gives what the consumer speaks.
  const bool v = ps.facts().consumer_versioned;
  f.made = MadeTensor::make(spec, v);
  if (!f.made) ctx.harness_error("could not build the test tensor");
  ProducerScript cfg;
  cfg.managed = v ? static_cast<void*>(f.made->versioned()) : static_cast<void*>(f.made->legacy());
  cfg.versioned = v;
  cfg.capsule_name = v ? kVersionedName : kLegacyName;
  cfg.destructor_deletes = true;
  py::dict ns;
  py::exec(kProducerTypeSource, ns);
  f.counts["type"] = 0;
  f.counts["instance"] = 0;
  py::object cap = table ? py::object(py::capsule(static_cast<void*>(table), kExchangeName)) : py::object(py::none());
  py::object type = ns["make_producer_type"](cap, f.counts);
  f.obj = type(make_producer(cfg));
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
      .needs({need::import_legacy}).proven_by({"consumer_xapi_no_major_check"})
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
      .needs({need::import_legacy}).proven_by({"consumer_xapi_no_null_check"})
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
      .needs({need::import_legacy}).proven_by({"consumer_xapi_ownership_lookup"})
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
      .needs({need::import_legacy}).proven_by({"consumer_xapi_ownership_lookup"})
      .run(consumer_type_lookup);
}

}  // namespace
}  // namespace dlpv::python
