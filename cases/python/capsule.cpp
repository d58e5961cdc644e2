// cases/python/capsule.cpp: python.capsule.*: the package's capsules: named for the struct they
// hold (CAP-01/02, FLAG-03's habit noted), distinct per call (CAP-10), released by the
// destructor when dropped unconsumed (CAP-03) and left alone once renamed to used_* (CAP-04).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

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
    if (c.raised) refused_export(ctx, "__dlpack__(max_version=(1, 3))", c.what());
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

DLPV_CASES {
  Declare("python.capsule.name.versioned",
          "__dlpack__(max_version=(1, 3)) returns a DLPack capsule whose name says which struct it holds")
      .must({"CAP-01", "CAP-02"}).python().also_needs(need::producer_protocol)
      .proven_by({"versioned_named_legacy"})
      .run(name_versioned);
}

// FLAG-03 is a library habit, not a rule (the requirement table says so): NumPy refuses a
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
    if (c.raised) refused_export(ctx, "__dlpack__()", c.what());
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

DLPV_CASES {
  Declare("python.capsule.name.legacy",
          "__dlpack__() returns a 'dltensor' capsule holding that struct (and notes FLAG-03's habit)")
      .must({"CAP-01", "CAP-02", "FLAG-03"}).python().also_needs(need::producer_protocol)
      .proven_by({"legacy_struct_named_versioned"})
      .run(name_legacy);
}

void distinct(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::dict kw = newest_kwargs(ps);
    Call a = call_dlpack(x, kw), b = call_dlpack(x, kw);
    if (a.raised || b.raised) refused_export(ctx, "__dlpack__", a.raised ? a.what() : b.what());
    ctx.check(!a.value.is(b.value), "CAP-10", "two __dlpack__ calls return two capsule objects",
              "distinct capsules", "the same capsule object twice");
    void* pa = capsule_pointer(a.value);
    void* pb = capsule_pointer(b.value);
    ctx.check(a.value.is(b.value) || pa != pb, "CAP-10", "... holding distinct managed structs",
              "distinct pointers", fmt::format("{} twice", pa));
  });
}

DLPV_CASES {
  Declare("python.capsule.distinct", "two __dlpack__ calls give distinct capsules and structs")
      .should({"CAP-10"}).python().also_needs(need::producer_protocol)
      .proven_by({"same_capsule"})
      .run(distinct);
}

// Both destructor cases: the heap watched from before (after a warm-up), then the capsule of a
// 4 MiB float32 array (`x`) exported with the newest keywords the package takes.
Call export_big_watched(CaseContext& ctx, PythonSubject& ps, HeapWatch& h, py::object& x) {
  h.visible = warm_up(ctx, ps);
  h.base = heap_in_use();
  x = ps.make(kBig, kF32);
  ctx.phase("export");
  Call c = call_dlpack(x, newest_kwargs(ps));
  if (c.raised) refused_export(ctx, "__dlpack__", c.what());
  return c;
}

// CAP-03: the validator puts a counting trampoline in front of the tensor's deleter (the capsule
// stays unconsumed), then drops the capsule: its destructor must call the deleter, once. Where
// the buffer shows in the heap, its release is checked too.
void destructor_unconsumed(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    py::object x;
    Call c = export_big_watched(ctx, ps, h, x);
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
    // CAP-03 asks for the deleter call, which the counter saw. What the deleter then does with
    // the buffer is the library's (the heap is process-wide: a library's own threads allocate
    // while the case runs, so a reading here is an observation, never a verdict).
    if (calls == 1 && h.visible && !h.released())
      ctx.note(fmt::format("after the deleter ran, the C heap was still {} KiB above its reading before the export",
                           h.kib_above_base()));
  });
}

DLPV_CASES {
  Declare("python.capsule.destructor.unconsumed",
          "a capsule dropped unconsumed releases the tensor through its destructor")
      .must({"CAP-03"}).python().also_needs(need::producer_protocol)
      .proven_by({"no_destructor"})
      .run(destructor_unconsumed);
}

// CAP-04: after the rename the capsule's destructor must leave the tensor alone: no call of the
// (counted) deleter when the capsule dies, and the data intact after churn (the library's
// allocator reuses what it frees).
void destructor_used_noop(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    HeapWatch h;
    py::object x;
    Call c = export_big_watched(ctx, ps, h, x);
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

DLPV_CASES {
  Declare("python.capsule.destructor.used_noop", "a capsule renamed to used_* is left alone by its destructor")
      .must({"CAP-04"}).python().also_needs(need::producer_protocol)
      .proven_by({"destructor_ignores_used"})
      .run(destructor_used_noop);
}

}  // namespace
}  // namespace dlpv::python
