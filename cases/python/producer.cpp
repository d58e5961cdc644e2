// cases/python/producer.cpp: the package as a Python producer: capsules
// (CAP-01/02/03/04/10), version negotiation (VER-06/07/08/09), keywords (KW-01/02/03/04/05/
// 09/11), devices (DEV-01/05/06), exceptions (ERR-01/02/06), flags (FLAG-02/03/05/06),
// deleters (DEL-05/06/07/09) and CPU streams (STRM-04).
// SPDX-License-Identifier: Apache-2.0
#include <thread>

#include "support/py_helpers.hpp"

namespace dlpv::py_shim {
namespace {

const std::vector<int64_t> kShape{3, 4};
const std::vector<int64_t> kBig{1024, 1024};  // 4 MiB of float32: big enough to see freed
constexpr size_t kBigBytes = 1024 * 1024 * 4;

// The capsule the producer gives for the newest protocol it speaks.
py::dict newest_kwargs(PythonSubject& ps) {
  return ps.facts().producer_versioned ? kw_max(1, 3) : py::dict();
}

// ---- CAP ----------------------------------------------------------------------------------

// CAP-01: the array API (__dlpack__, max_version): "This method may return a capsule of version
// max_version (recommended if it does support that), or of a different version. This means the
// consumer must verify the version even when max_version is passed." So a legacy 'dltensor'
// capsule is a lawful answer to max_version=(1, 3) (VER-07 prefers the versioned one: a
// warning there), and the package is then judged as the legacy producer it is. What must hold
// is that the name is one of the two and says what the struct is (CAP-02).
void name_versioned(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x, kw_max(1, 3));
    if (c.is("TypeError")) ctx.skip("legacy-only producer: __dlpack__(max_version=(1, 3)) " + c.what());
    if (c.raised) ctx.harness_error("__dlpack__(max_version=(1, 3)) " + c.what());
    const std::string name = capsule_name(c.value);
    void* p = capsule_pointer(c.value);
    const bool named = name == kVersionedName || name == kLegacyName;
    ctx.check(named && p, "CAP-01",
              "__dlpack__(max_version=(1, 3)) returns a non-NULL capsule named 'dltensor_versioned' or 'dltensor'",
              "'dltensor_versioned' (or 'dltensor')", c.what());
    if (!p || !named) return;
    if (name == kLegacyName)
      ctx.note("__dlpack__(max_version=(1, 3)) gives a legacy 'dltensor' capsule: lawful (\"may return a capsule "
               "... of a different version\"); judged as a legacy producer, VER-07 reports the preference");
    ctx.phase("inspect");
    std::string why_v, why_l;
    const bool as_versioned = plausible(static_cast<char*>(p) + 32, kShape, kF32, &why_v) &&
                              static_cast<DLManagedTensorVersioned*>(p)->version.major == 1;
    const bool as_legacy = plausible(p, kShape, kF32, &why_l);
    ctx.check(name == kVersionedName ? as_versioned : as_legacy, "CAP-02",
              "the struct behind the capsule is the kind its name says",
              name == kVersionedName ? "DLManagedTensorVersioned (version 1.x, dl_tensor at 32)"
                                     : "DLManagedTensor (dl_tensor at 0)",
              as_versioned ? "a DLManagedTensorVersioned" : as_legacy ? "a DLManagedTensor"
                                                                      : "neither (" + why_v + ")");
  });
}

// FLAG-03 is a library habit, not a rule (checklist, corrected 2026-11-22): NumPy refuses a
// read-only array asked for as a legacy capsule (no flags to say read-only); others export it.
// The array API only asks consumers that do not understand READ_ONLY to ignore it. Recorded as
// a note here, never a verdict.
void note_read_only_legacy(CaseContext& ctx, PythonSubject& ps) {
  py::object ro;
  try {
    ro = ps.make(kShape, kF32, "contiguous", true);
  } catch (const PythonSubject::NotImplemented&) {
    return;  // no read-only arrays in this package
  }
  Call c = call_dlpack(ro);
  ctx.note("FLAG-03 (a habit, not a rule): a read-only array asked for as a legacy capsule " +
           std::string(c.raised ? "is refused: " + c.text : "is exported (" + c.what() + ")"));
}

void name_legacy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x);
    if (c.is("BufferError"))
      ctx.skip("__dlpack__() (max_version=None) " + c.what() + ": no legacy export (VER-06 reports it)");
    if (c.raised) ctx.harness_error("__dlpack__() " + c.what());
    const std::string name = capsule_name(c.value);
    void* p = capsule_pointer(c.value);
    ctx.check((name == kLegacyName || name == kVersionedName) && p, "CAP-01",
              "__dlpack__() returns a non-NULL capsule named 'dltensor' (or 'dltensor_versioned')",
              "'dltensor'", c.what());
    if (!p) return;
    ctx.phase("inspect");
    std::string why;
    const bool ok = name == kLegacyName ? plausible(p, kShape, kF32, &why)
                                        : plausible(static_cast<char*>(p) + 32, kShape, kF32, &why);
    ctx.check(ok, "CAP-02", "the struct behind the capsule is the kind its name says",
              name == kLegacyName ? "DLManagedTensor (dl_tensor at 0)" : "DLManagedTensorVersioned",
              ok ? "" : why);
    note_read_only_legacy(ctx, ps);
  });
}

void distinct(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::dict kw = newest_kwargs(ps);
    Call a = call_dlpack(x, kw), b = call_dlpack(x, kw);
    if (a.raised || b.raised) ctx.harness_error("__dlpack__ " + (a.raised ? a.what() : b.what()));
    ctx.check(!a.value.is(b.value), "CAP-10", "two __dlpack__ calls return two capsule objects",
              "distinct capsules", "the same capsule object twice");
    void* pa = capsule_pointer(a.value);
    void* pb = capsule_pointer(b.value);
    ctx.check(a.value.is(b.value) || pa != pb, "CAP-10", "... holding distinct managed structs",
              "distinct pointers", fmt::format("{} twice", pa));
  });
}

// Exports `x` with the newest keywords the package takes and takes the tensor out of the
// capsule as a consumer would (the capsule, renamed, is dropped).
Taken export_taken(CaseContext& ctx, PythonSubject& ps, const py::object& x) {
  Call c = call_dlpack(x, newest_kwargs(ps));
  if (c.raised) ctx.harness_error("__dlpack__ " + c.what());
  return take(ctx, c.value, "CAP-01");
}

// One full round of what a heap measurement is about to do (make, export, consume, release),
// so that what a library keeps for good the first time (JIT caches, pools, interned dtypes:
// JAX keeps about 1.5 MB) is already in the baseline and not taken for a leak. Returns whether
// the deleter's release of the 4 MiB buffer shows in the C heap at all: TensorFlow and MLX keep
// their buffers in allocators of their own, where a release cannot be observed from here.
bool warm_up(CaseContext& ctx, PythonSubject& ps) {
  size_t before = 0;
  {
    py::object x = ps.make(kBig, kF32);
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    gc_collect(ctx);
    before = heap_in_use();
    t.release();
  }
  gc_collect(ctx);
  // Some libraries free on a thread of their own (JAX): the drop is awaited briefly.
  return await_calls([&] { return heap_in_use() + kBigBytes / 2 <= before ? 1 : 0; }, 1) == 1;
}

// Heap measurements see a library's buffer only if it comes from malloc: TensorFlow and MLX
// allocate their buffers elsewhere, where freeing one changes nothing the validator can see.
// `visible` (from warm_up): a deleter's release showed in the heap; when it did not, a release
// cannot be observed here and the verdict says so instead of guessing.
struct HeapWatch {
  size_t base = 0;
  bool visible = false;
  long long kib_above_base() const { return (static_cast<long long>(heap_in_use()) - static_cast<long long>(base)) / 1024; }
  bool released() const { return heap_in_use() < base + kBigBytes / 4; }
};
const char* const kInvisible =
    "releasing the library's 4 MiB buffer does not show in the C heap (its allocator is not malloc), so whether "
    "the deleter released it cannot be observed here";

// CAP-03: the validator puts a counting trampoline in front of the tensor's deleter (the capsule
// stays unconsumed), then drops the capsule: its destructor must call the deleter, once. Where
// the buffer shows in the heap, its release is checked too.
void destructor_unconsumed(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    h.visible = warm_up(ctx, ps);
    h.base = heap_in_use();
    py::object x = ps.make(kBig, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x, newest_kwargs(ps));
    if (c.raised) ctx.harness_error("__dlpack__ " + c.what());
    const std::string name = capsule_name(c.value);
    DeleterCounter counter(capsule_pointer(c.value), name == kVersionedName);
    x = py::none();
    gc_collect(ctx);
    ctx.phase("release");
    c.value = py::none();  // dropped without being consumed: the destructor must delete
    gc_collect(ctx);
    // Some libraries release on a thread of their own (JAX): a deleter call, or a release the
    // heap shows, is awaited briefly.
    await_calls([&] { return counter.calls() > 0 || (h.visible && h.released()) ? 1 : 0; }, 1);
    const int calls = counter.installed() ? counter.calls() : 0;
    if (calls == 0 && h.visible && h.released()) {
      // Some destructors free the tensor without going through the struct's deleter field.
      ctx.check(true, "CAP-03", "a capsule dropped unconsumed releases the tensor");
      ctx.note("the capsule's destructor released the 4 MiB buffer without calling the tensor's deleter field");
      return;
    }
    if (calls == 0 && !h.visible)
      ctx.check(false, "CAP-03", "a capsule dropped unconsumed calls the tensor's deleter (its destructor)", "1 call",
                "0 calls (and a release would not show in the C heap either)");
    else
      ctx.check(calls == 1, "CAP-03", "a capsule dropped unconsumed calls the tensor's deleter (its destructor), once",
                "1 call", fmt::format("{} call(s)", calls));
    if (h.visible)
      ctx.check(h.released(), "CAP-03", "... and the 4 MiB buffer is released", "the 4 MiB buffer freed",
                fmt::format("{} KiB still held", h.kib_above_base()));
  });
}

// CAP-04: after the rename the capsule's destructor must leave the tensor alone: no call of the
// (counted) deleter when the capsule dies, and the data intact after churn (the library's
// allocator reuses what it frees).
void destructor_used_noop(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    h.visible = warm_up(ctx, ps);
    h.base = heap_in_use();
    py::object x = ps.make(kBig, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x, newest_kwargs(ps));
    if (c.raised) ctx.harness_error("__dlpack__ " + c.what());
    Taken t = take(ctx, c.value, "CAP-01");
    DeleterCounter counter(t.p, t.versioned);
    x = py::none();
    ctx.phase("release");
    c.value = py::none();  // renamed to used_*: the destructor must leave the tensor alone
    gc_collect(ctx);
    std::vector<py::object> churn;  // allocations of the same size reuse freed memory
    for (int i = 0; i < 4; ++i) churn.push_back(ps.make(kBig, DLDataType{kDLInt, 64, 1}));
    const int early = counter.calls();
    const std::string diff = early ? "" : data_mismatch(*t.tensor(), kBig, kF32);
    ctx.check(early == 0 && diff.empty(), "CAP-04",
              "dropping a capsule renamed to used_* leaves the tensor alive and intact (the consumer owns it)",
              "no deleter call, data intact",
              early ? fmt::format("the capsule's destructor called the deleter ({} call(s))", early) : diff);
    if (early || !diff.empty()) return;  // released already: calling the deleter now would be a double free
    churn.clear();
    ctx.phase("deleter");
    {
      py::gil_scoped_release nogil;
      t.release();  // the consumer's one call (whether it frees at once is DEL-01's matter)
    }
    ctx.check(counter.calls() == 1, "CAP-04", "the consumer's deleter call reaches the tensor's deleter once",
              "1 call", fmt::format("{} call(s)", counter.calls()));
  });
}

// ---- DEL ----------------------------------------------------------------------------------

void outlives_source(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kBig, kF32);
    ctx.phase("export");
    Call c = call_dlpack(x, newest_kwargs(ps));
    if (c.raised) ctx.harness_error("__dlpack__ " + c.what());
    Taken t = take(ctx, c.value, "CAP-01");
    x = py::none();
    gc_collect(ctx);
    // Churn the allocator so freed memory would be reused and overwritten.
    std::vector<py::object> churn;
    for (int i = 0; i < 4; ++i) churn.push_back(ps.make(kBig, DLDataType{kDLInt, 64, 1}));
    ctx.phase("read");
    const std::string diff = data_mismatch(*t.tensor(), kBig, kF32);
    ctx.check(diff.empty(), "DEL-05",
              "the data stays valid after the source array is gone, until the deleter runs",
              "the reference pattern", diff);
    if (!diff.empty()) return;  // leave a broken tensor alone
    ctx.phase("deleter");
    py::gil_scoped_release nogil;
    t.release();
  });
}

void foreign_thread(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    h.visible = warm_up(ctx, ps);
    h.base = heap_in_use();
    py::object x = ps.make(kBig, kF32);
    py::object wr = py::module_::import("weakref").attr("ref");
    py::object ref = py::none();
    try {
      ref = wr(x);
    } catch (py::error_already_set&) {
    }
    ctx.phase("export");
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    gc_collect(ctx);
    ctx.phase("deleter");
    {
      // A fresh native thread, no Python thread state, and this thread does not hold the
      // GIL either: the deleter must take it itself if it needs it (a hang = timeout).
      py::gil_scoped_release nogil;
      std::thread th([&t] { t.release(); });
      th.join();
    }
    gc_collect(ctx);
    if (!h.visible) {
      // It returned without a crash or a hang: that much is observable.
      ctx.check(true, "DEL-06", "a deleter called from a fresh thread without the GIL returned");
      ctx.note(kInvisible);
    } else {
      ctx.check(h.released(), "DEL-06", "a deleter called from a fresh thread without the GIL releases the tensor",
                "the 4 MiB buffer freed", fmt::format("{} KiB still held", h.kib_above_base()));
    }
    if (!ref.is_none() && !ref().is_none())
      ctx.note("the source array object is still alive after the deleter ran");
  });
}

void no_python_error(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Taken t = export_taken(ctx, ps, x);
    x = py::none();
    ctx.phase("deleter");
    t.release();  // with the GIL held, as a Python consumer would
    PyObject* pending = PyErr_Occurred();
    std::string what;
    if (pending) {
      what = reinterpret_cast<PyTypeObject*>(pending)->tp_name;
      PyErr_Clear();
    }
    ctx.check(pending == nullptr, "DEL-09", "the deleter leaves no Python exception set",
              "PyErr_Occurred() == NULL", what);
  });
}

void after_finalize(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    (void)ps.make(kShape, kF32);  // the helper makes the same array: a skip if the adapter cannot
    const bool versioned = ps.facts().producer_versioned;
    const std::string code =
        "from validator import _dlpack_validate as m, adapters\n"
        "a = adapters.resolve(" + py::repr(py::str(ps.spec())).cast<std::string>() + ")\n"
        "x = a.make((3, 4), (2, 32), " + fmt::format("({}, {})", static_cast<int>(ps.home_device().device_type),
                                                     ps.home_device().device_id) + ")\n"
        "m.keep_until_exit(x.__dlpack__(" + std::string(versioned ? "max_version=(1, 3)" : "") + "))\n"
        "del x\n"
        "print('ready', flush=True)\n";
    py::module_ sp = py::module_::import("subprocess");
    py::object sys = py::module_::import("sys");
    ctx.phase("deleter");
    py::object r;
    try {
      r = sp.attr("run")(py::make_tuple(sys.attr("executable"), "-c", code), py::arg("capture_output") = true,
                         py::arg("timeout") = 8);
    } catch (py::error_already_set& e) {
      ctx.check(false, "DEL-07", "a deleter run after interpreter finalisation returns (leaks rather than hangs)",
                "exit 0", describe(e));
      return;
    }
    const int rc = r.attr("returncode").cast<int>();
    std::string err = py::bytes(r.attr("stderr")).cast<std::string>();
    if (err.size() > 300) err = err.substr(err.size() - 300);
    const std::string out = py::bytes(r.attr("stdout")).cast<std::string>();
    if (out.find("ready") == std::string::npos)
      ctx.harness_error(fmt::format("the helper process failed before finalisation (status {}): {}", rc, err));
    ctx.check(rc == 0, "DEL-07",
              "a deleter called after Py_Finalize (from a C++ static destructor) does not crash",
              "exit status 0", rc < 0 ? fmt::format("killed by signal {}: {}", -rc, err)
                                      : fmt::format("exit status {}: {}", rc, err));
  });
}

// ---- VER ----------------------------------------------------------------------------------

void max_version_none(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call c = call_dlpack(x);
    if (c.is("BufferError")) {
      ctx.check_as(Severity::may, true, "VER-06",
                   "max_version=None refused with BufferError (tolerated from March 2025)");
      return;
    }
    if (c.raised) ctx.harness_error("__dlpack__() " + c.what());
    ctx.check(capsule_name(c.value) == kLegacyName, "VER-06",
              "__dlpack__() (max_version=None) returns a legacy 'dltensor' capsule (a versioned "
              "one breaks consumers that predate DLPack 1.0)",
              "'dltensor'", c.what());
  });
}

void max_version_own(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (auto [ma, mi] : {std::pair<uint32_t, uint32_t>{1, 0}, {1, 99}, {2, 0}}) {
      Call c = call_dlpack(x, kw_max(ma, mi));
      const std::string name = capsule_name(c.value);
      auto* v = name == kVersionedName ? static_cast<DLManagedTensorVersioned*>(capsule_pointer(c.value)) : nullptr;
      ctx.check(v && v->version.major == 1, "VER-07",
                fmt::format("max_version=({}, {}) gives a versioned tensor of major 1", ma, mi),
                "'dltensor_versioned', version 1.x",
                v ? fmt::format("version {}.{}", v->version.major, v->version.minor) : c.what());
    }
  });
}

void max_version_old_major(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call c = call_dlpack(x, kw_max(0, 8));
    const std::string name = capsule_name(c.value);
    if (c.is("BufferError")) {
      ctx.check(true, "VER-08", "max_version=(0, 8) refused with BufferError (no legacy export)");
      const bool names = c.text.find('0') != std::string::npos && c.text.find('1') != std::string::npos;
      ctx.check_as(Severity::may, names, "ERR-06", "the BufferError message names both versions", "0.8 and 1.x",
                   c.text);
      return;
    }
    ctx.check(name == kLegacyName, "VER-08",
              "max_version=(0, 8) gives a legacy 'dltensor' capsule (or BufferError)",
              "'dltensor' or BufferError", c.what());
  });
}

void type_error_free(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (auto [ma, mi] : {std::pair<uint32_t, uint32_t>{1, 0}, {1, 3}, {2, 0}, {0, 8}}) {
      Call c = call_dlpack(x, kw_max(ma, mi));
      ctx.check(!c.is("TypeError"), "VER-09",
                fmt::format("a well-formed max_version=({}, {}) never raises TypeError (consumers "
                            "read TypeError as 'legacy producer')", ma, mi),
                "a capsule or BufferError", c.what());
    }
  });
}

// ---- KW -----------------------------------------------------------------------------------

void keywords_accepted(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    // A producer that speaks the versioned protocol claims the 2023.12 signature: MUST.
    const Severity sev = ps.facts().producer_versioned ? Severity::must : Severity::should;
    const std::pair<const char*, py::object> kws[] = {
        {"stream", py::none()}, {"max_version", py::make_tuple(1, 0)},
        {"dl_device", py::make_tuple(1, 0)}, {"copy", py::none()}};
    for (const auto& [key, value] : kws) {
      py::dict kw;
      kw[key] = value;
      if (std::string(key) != "max_version" && ps.facts().producer_versioned) kw["max_version"] = py::make_tuple(1, 0);
      Call c = call_dlpack(x, kw);
      ctx.check_as(sev, !c.is("TypeError"), "KW-01",
                   fmt::format("__dlpack__ accepts the keyword-only argument {}=", key),
                   "no TypeError", c.what());
    }
  });
}

void invalid_arguments(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    const std::pair<const char*, py::object> bad[] = {
        {"max_version", py::str("x")}, {"stream", py::str("x")}};
    for (const auto& [key, value] : bad) {
      py::dict kw;
      kw[key] = value;
      Call c = call_dlpack(x, kw);
      ctx.check(c.raised, "ERR-02", fmt::format("__dlpack__({}='x') is refused with an exception", key),
                "an exception (TypeError/ValueError)", c.what());
      if (c.is("BufferError"))
        ctx.note(fmt::format("{}='x' raised BufferError (ERR-02 prefers another type; INFO)", key));
    }
    for (py::object mv : {py::object(py::make_tuple(1, 0, 0)), py::object(py::list(py::make_tuple(1, 0)))}) {
      py::dict kw;
      kw["max_version"] = mv;
      Call c = call_dlpack(x, kw);
      ctx.check_as(Severity::may, true, "KW-02",
                   fmt::format("max_version={}: {}", py::repr(mv).cast<std::string>(), c.what()));
    }
  });
}

// Data pointer (element 0) of a capsule's tensor; the capsule is dropped unconsumed after.
std::optional<uintptr_t> capsule_address(py::handle cap, uint64_t* flags = nullptr) {
  const std::string name = capsule_name(cap);
  void* p = capsule_pointer(cap);
  if (!p) return std::nullopt;
  if (name == kVersionedName) {
    auto* v = static_cast<DLManagedTensorVersioned*>(p);
    if (flags) *flags = v->flags;
    return reinterpret_cast<uintptr_t>(element0(v->dl_tensor));
  }
  if (name == kLegacyName) return reinterpret_cast<uintptr_t>(element0(static_cast<DLManagedTensor*>(p)->dl_tensor));
  return std::nullopt;
}

void copy_true(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call plain = call_dlpack(x, kw_max(1, 3));
    py::dict kw = kw_max(1, 3);
    kw["copy"] = true;
    Call c = call_dlpack(x, kw);
    if (c.is("BufferError")) {
      ctx.check_as(Severity::should, false, "KW-03", "copy=True makes a copy (refused with BufferError)",
                   "a copied tensor", c.what());
      return;
    }
    uint64_t flags = 0;
    auto a0 = capsule_address(plain.value);
    auto a1 = capsule_address(c.value, &flags);
    if (!a0 || !a1) ctx.harness_error("copy=True / default export: " + c.what() + " / " + plain.what());
    ctx.check(*a0 != *a1, "KW-03", "copy=True never aliases the source", "a different data address",
              fmt::format("the same address {:#x}", *a1));
    ctx.check((flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05", "a copy is flagged IS_COPIED",
              "bit 1 set", fmt::format("flags = {:#x}", flags));
    DLTensor& t = static_cast<DLManagedTensorVersioned*>(capsule_pointer(c.value))->dl_tensor;
    const std::string diff = data_mismatch(t, kShape, kF32);
    ctx.check(diff.empty(), "KW-03", "the copy holds the source's values", "the reference pattern", diff);
  });
}

void copy_false(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    auto lib = library_address(x);
    Call plain = call_dlpack(x, kw_max(1, 3));
    py::dict kw = kw_max(1, 3);
    kw["copy"] = false;
    Call c = call_dlpack(x, kw);
    uint64_t flags = 0;
    auto a0 = lib ? lib : capsule_address(plain.value);
    auto a1 = capsule_address(c.value, &flags);
    ctx.check(a1.has_value(), "KW-04", "copy=False on a CPU array exports it (no copy is needed)",
              "a 'dltensor_versioned' capsule", c.what());
    if (!a1 || !a0) return;
    ctx.check(*a0 == *a1, "KW-04", "copy=False never copies: the tensor aliases the array",
              fmt::format("{:#x}", *a0), fmt::format("{:#x}", *a1));
    ctx.check((flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "FLAG-06", "IS_COPIED is clear without a copy",
              "bit 1 clear", fmt::format("flags = {:#x}", flags));
  });
}

// KW-04 where a copy is needed: an array on a device whose memory the CPU cannot address,
// asked for on the CPU (dl_device=(1, 0)) with copy=False. The array API (__dlpack__, copy):
// "If False, the function must never copy, and raise a BufferError in case a copy is deemed
// necessary" (BufferError since the 2024.12 text; ValueError before: a warning).
void copy_false_needs_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    std::optional<DLDevice> far;
    for (const DLDevice& d : ps.devices()) {
      const int t = static_cast<int>(d.device_type);
      if (t != kDLCPU && t != kDLCUDAHost && t != kDLROCMHost && t != kDLCUDAManaged) {
        far = d;
        break;
      }
    }
    if (!far)
      ctx.skip("the adapter declares no device whose memory the CPU cannot address, so no export here needs a "
               "copy (python.kw.copy_false checks that copy=False exports without one)");
    py::object x = ps.make(kShape, kF32, "contiguous", false, *far);
    py::dict kw = kw_max(1, 3);
    kw["dl_device"] = py::make_tuple(1, 0);
    kw["copy"] = false;
    ctx.phase("export");
    Call c = call_dlpack(x, kw);
    const std::string what = "__dlpack__(dl_device=(1, 0), copy=False) of an array on " + device_name(*far);
    if (!c.raised) {
      uint64_t flags = 0;
      const bool copied = capsule_address(c.value, &flags) && (flags & DLPACK_FLAG_BITMASK_IS_COPIED);
      ctx.check(false, "KW-04", what + " needs a copy, which copy=False forbids: it must raise BufferError",
                "BufferError", c.what() + (copied ? " flagged IS_COPIED (a copy)" : ""));
    } else if (c.is("ValueError")) {
      ctx.check_as(Severity::should, false, "KW-04",
                   what + " raises ValueError: the 2024.12 text asks for BufferError (ValueError was the older text)",
                   "BufferError", c.text);
    } else {
      ctx.check(c.is("BufferError"), "KW-04", what + " must raise BufferError", "BufferError", c.text);
    }
  });
}

void copy_none_zero_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::dict kw = newest_kwargs(ps);
    auto lib = library_address(x);
    Call a = call_dlpack(x, kw), b = call_dlpack(x, kw);
    if (a.raised) ctx.harness_error("__dlpack__ " + a.what());
    uint64_t flags = 0;
    auto pa = capsule_address(a.value, &flags), pb = capsule_address(b.value);
    if (!pa || !pb) ctx.harness_error("__dlpack__ did not give DLPack capsules: " + a.what());
    if (lib)
      ctx.check(*pa == *lib, "KW-09", "the default export is zero-copy: data + byte_offset is the array's own element 0",
                fmt::format("{:#x}", *lib), fmt::format("{:#x}", *pa));
    else
      ctx.note("the array exposes no address of its own (no __array_interface__ / data_ptr())");
    ctx.check(*pa == *pb, "KW-05", "two default exports of one CPU array share its memory (copy=None reuses it)",
              fmt::format("{:#x}", *pa), fmt::format("{:#x}", *pb));
    if (capsule_name(a.value) == kVersionedName)
      ctx.check((flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "FLAG-06", "IS_COPIED is clear for a zero-copy export",
                "bit 1 clear", fmt::format("flags = {:#x}", flags));
  });
}

// ---- DEV ----------------------------------------------------------------------------------

void device_matches(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    Call d = attempt([&] { return x.attr("__dlpack_device__")(); });
    if (!ctx.check(!d.raised, "KW-11", "__dlpack_device__() takes no arguments besides self", "a result", d.what()))
      return;
    int dt = -1, id = -1;
    bool shaped = false;
    try {
      py::tuple t = d.value.cast<py::tuple>();
      if (t.size() == 2) {
        dt = py::int_(t[0]).cast<int>();  // IntEnum members convert too (A19)
        id = py::int_(t[1]).cast<int>();
        shaped = true;
      }
    } catch (...) {
    }
    ctx.check(shaped, "DEV-01", "__dlpack_device__() returns a 2-tuple of integers", "(device_type, device_id)",
              py::repr(d.value).cast<std::string>());
    Call c = call_dlpack(x, newest_kwargs(ps));
    void* p = capsule_pointer(c.value);
    if (!p || !shaped) return;
    const DLDevice dev = capsule_name(c.value) == kVersionedName
                             ? static_cast<DLManagedTensorVersioned*>(p)->dl_tensor.device
                             : static_cast<DLManagedTensor*>(p)->dl_tensor.device;
    ctx.check(dev.device_type == dt && dev.device_id == id, "DEV-01",
              "__dlpack_device__() equals the exported tensor's device", fmt::format("({}, {})", dt, id),
              fmt::format("({}, {})", static_cast<int>(dev.device_type), dev.device_id));
  });
}

void dl_device_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::dict kw = kw_max(1, 3);
    kw["dl_device"] = py::make_tuple(1, 0);
    Call c = call_dlpack(x, kw);
    void* p = capsule_name(c.value) == kVersionedName ? capsule_pointer(c.value) : nullptr;
    const DLDevice dev = p ? static_cast<DLManagedTensorVersioned*>(p)->dl_tensor.device : DLDevice{};
    ctx.check(p && dev.device_type == kDLCPU, "DEV-05",
              "__dlpack__(dl_device=(1, 0)) exports to host memory", "a capsule on (1, 0)",
              p ? device_name(dev) : c.what());
  });
}

void dl_device_unserveable(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (auto dev : {std::pair<int, int>{7, 0}, {2, 999}}) {
      py::dict kw = kw_max(1, 3);
      kw["dl_device"] = py::make_tuple(dev.first, dev.second);
      Call c = call_dlpack(x, kw);
      const std::string what = fmt::format("dl_device=({}, {})", dev.first, dev.second);
      // The array API (__dlpack__, dl_device): "If the device type cannot be handled by the
      // producer, this function must raise BufferError."
      if (!ctx.check(c.raised, "DEV-06", what + " that the producer cannot serve is refused", "BufferError", c.what()))
        continue;
      ctx.check(c.is("BufferError"), "DEV-06", what + " that the producer cannot serve must raise BufferError",
                "BufferError", c.text);
    }
  });
}

// ---- ERR, FLAG, STRM ----------------------------------------------------------------------

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

void read_only(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32, "contiguous", true);
    Call c = call_dlpack(x, kw_max(1, 3));
    uint64_t flags = 0;
    if (!capsule_address(c.value, &flags) || capsule_name(c.value) != kVersionedName)
      ctx.harness_error("__dlpack__(max_version=(1, 3)) of a read-only array " + c.what());
    ctx.check((flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
              "a read-only array is exported with READ_ONLY set", "bit 0 set", fmt::format("flags = {:#x}", flags));
  });
}

void stream_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (int s : {1, 2}) {
      py::dict kw = newest_kwargs(ps);
      kw["stream"] = s;
      Call c = call_dlpack(x, kw);
      ctx.check(c.raised, "STRM-04", fmt::format("stream={} for a CPU array (streams must be None there) is rejected", s),
                "an exception", c.what());
    }
  });
}

}  // namespace
}  // namespace dlpv::py_shim

DLPV_CASE_UNIT(python_producer) {
  using namespace dlpv;
  using namespace dlpv::py_shim;
  const Severity M = Severity::must, S = Severity::should;
  const std::vector<std::string> V = {"export_versioned"};
  add_python_case(reg, "python.capsule.name.versioned",
                  "__dlpack__(max_version=(1, 3)) returns a DLPack capsule whose name says which struct it holds",
                  {"CAP-01", "CAP-02"}, M, name_versioned);
  add_python_case(reg, "python.capsule.name.legacy",
                  "__dlpack__() returns a 'dltensor' capsule holding that struct (and notes FLAG-03's habit)",
                  {"CAP-01", "CAP-02", "FLAG-03"}, M, name_legacy);
  add_python_case(reg, "python.capsule.distinct", "two __dlpack__ calls give distinct capsules and structs",
                  {"CAP-10"}, S, distinct);
  add_python_case(reg, "python.capsule.destructor.unconsumed",
                  "a capsule dropped unconsumed releases the tensor through its destructor", {"CAP-03"}, M,
                  destructor_unconsumed);
  add_python_case(reg, "python.capsule.destructor.used_noop",
                  "a capsule renamed to used_* is left alone by its destructor", {"CAP-04"}, M, destructor_used_noop);
  add_python_case(reg, "python.deleter.outlives_source",
                  "exported data stays valid after the source array dies, until the deleter runs", {"DEL-05"}, M,
                  outlives_source);
  add_python_case(reg, "python.deleter.foreign_thread",
                  "the deleter works from a fresh native thread without the GIL", {"DEL-06"}, M, foreign_thread);
  add_python_case(reg, "python.deleter.no_python_error", "the deleter leaves no Python exception set",
                  {"DEL-09"}, S, no_python_error);
  add_python_case(reg, "python.deleter.after_finalize",
                  "a deleter run after interpreter finalisation does not crash", {"DEL-07"}, S, after_finalize);
  add_python_case(reg, "python.version.max_version_none", "max_version=None gives a legacy capsule",
                  {"VER-06"}, S, max_version_none);
  add_python_case(reg, "python.version.max_version_own",
                  "max_version (1,0), (1,99), (2,0) give a versioned tensor of major 1", {"VER-07"}, S,
                  max_version_own, V);
  add_python_case(reg, "python.version.max_version_old_major",
                  "max_version=(0, 8) gives a legacy capsule or BufferError", {"VER-08", "ERR-06"}, S,
                  max_version_old_major, V);
  add_python_case(reg, "python.kw.max_version.type_error_free",
                  "well-formed max_version tuples never raise TypeError", {"VER-09"}, S, type_error_free, V);
  add_python_case(reg, "python.kw.keywords_accepted",
                  "__dlpack__ accepts stream, max_version, dl_device and copy (2023.12)", {"KW-01"}, S,
                  keywords_accepted);
  add_python_case(reg, "python.kw.invalid_arguments", "malformed stream/max_version values raise an exception",
                  {"ERR-02", "KW-02"}, S, invalid_arguments);
  add_python_case(reg, "python.kw.copy_true", "copy=True copies and sets IS_COPIED", {"KW-03", "FLAG-05"}, M,
                  copy_true, V);
  add_python_case(reg, "python.kw.copy_false", "copy=False on a CPU array is zero-copy, IS_COPIED clear",
                  {"KW-04", "FLAG-06"}, M, copy_false, V);
  add_python_case(reg, "python.kw.copy_false.needs_copy",
                  "copy=False where only a copy could serve (dl_device=CPU for device memory) raises BufferError",
                  {"KW-04"}, M, copy_false_needs_copy, V);
  add_python_case(reg, "python.kw.copy_none.zero_copy",
                  "the default export aliases the array's own memory", {"KW-05", "KW-09", "FLAG-06"}, M,
                  copy_none_zero_copy);
  add_python_case(reg, "python.device.matches_capsule",
                  "__dlpack_device__() is a 2-tuple equal to the capsule's device", {"DEV-01", "KW-11"}, M,
                  device_matches);
  add_python_case(reg, "python.device.dl_device_cpu", "dl_device=(1, 0) exports to host memory", {"DEV-05"}, M,
                  dl_device_cpu, V);
  add_python_case(reg, "python.device.dl_device_unserveable",
                  "a dl_device the producer cannot serve raises BufferError", {"DEV-06"}, M,
                  dl_device_unserveable, V);
  add_python_case(reg, "python.error.unexportable", "data DLPack cannot express raises BufferError",
                  {"ERR-01", "DTYPE-04", "DTYPE-12", "LAYOUT-12", "LAYOUT-13"}, S, unexportable);
  add_python_case(reg, "python.flags.read_only", "a read-only array is exported with READ_ONLY", {"FLAG-02"}, S,
                  read_only, V);
  add_python_case(reg, "python.stream.cpu_rejects", "non-None streams for CPU arrays are rejected",
                  {"STRM-04"}, S, stream_cpu);
}
