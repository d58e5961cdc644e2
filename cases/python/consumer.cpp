// cases/python/consumer.cpp: the package as a Python consumer: its from_dlpack
// fed by the shim's probe producers (checklist T-FAKE) that hand out validator-made tensors
// (T-CNT counting deleters, T-GUARD guard pages): capsule ownership (CAP-05/06/09, DEL-02/
// 03/08), version negotiation (VER-03/04/05/10/11), keywords (KW-07/08/09/10, SEM-02),
// exceptions (ERR-03/04/07), devices (DEV-04/07/09), streams (STRM-01/02/03), flags (FLAG-04).
// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include <pybind11/eval.h>

#include "support/py_helpers.hpp"

namespace dlpv::py_shim {
namespace {

// One probe-fed import: the tensor, the probe holding it, what from_dlpack did.
struct Feed {
  std::unique_ptr<MadeTensor> made;
  std::unique_ptr<MadeTensor> copy;  // what the probe hands out for copy=True
  py::object probe;
  Call result;
  bool versioned = false;

  Feed() = default;
  Feed(Feed&&) = default;
  Feed& operator=(Feed&&) = default;
  ~Feed() {
    // A tensor the consumer may still hold (it never called the deleter) must outlive it:
    // leak it rather than free memory a leaked array still points at.
    if (made && made->deleter_calls() == 0) (void)made.release();
    if (copy && copy->deleter_calls() == 0) (void)copy.release();
  }
  bool handed = false;      // a capsule was handed out (set by settle)
  std::string final_name;   // its name when the consumer was done (used_* = ownership taken)
  Probe& p() { return probe_of(probe); }
  int deletes() const { return made->deleter_calls() + (copy ? copy->deleter_calls() : 0); }
  // The tensor as built, before any consumer ran its deleter (which poisons the struct).
  DLTensor snap{};
  std::vector<int64_t> snap_shape, snap_strides;
  void snapshot() {
    if (made->spec().guard_after_prefix) return;  // dl_tensor is unreadable on purpose
    snap = versioned ? made->versioned()->dl_tensor : made->legacy()->dl_tensor;
    if (snap.shape) snap_shape.assign(snap.shape, snap.shape + snap.ndim);
    if (snap.strides) snap_strides.assign(snap.strides, snap.strides + snap.ndim);
    snap.shape = snap.shape ? snap_shape.data() : nullptr;
    snap.strides = snap.strides ? snap_strides.data() : nullptr;
  }
  const DLTensor& tensor() const { return snap; }
  uintptr_t source_address() const { return reinterpret_cast<uintptr_t>(element0(snap)); }
  /// Drop the result and the probe (and with it the last capsule), then collect.
  void settle(CaseContext& ctx) {
    if (probe && !probe.is_none()) {
      handed = !p().last_capsule().is_none();
      if (handed) final_name = capsule_name(p().last_capsule());
    }
    result.value = py::none();
    probe = py::none();
    gc_collect(ctx);
  }
};

// After settle(): whatever tensor was handed out in a capsule was deleted exactly once. Who
// deletes follows the capsule's name (the Python spec: the consumer takes ownership "by
// renaming the capsule to used_dltensor" so that the capsule's destructor will not run): a
// consumer that renamed it owns the tensor and must call the deleter itself, also when it then
// refuses (CuPy does exactly that); one that left it unconsumed leaves it to the destructor.
// Either way: one call in all. The message says which, and what from_dlpack did.
void check_deleted_once(CaseContext& ctx, const Feed& f, const char* req, const std::string& what) {
  const int want = f.handed ? 1 : 0;
  {
    py::gil_scoped_release nogil;  // a consumer's release thread may need the GIL
    await_calls([&] { return f.deletes(); }, want);
  }
  std::string state = "no capsule was handed out";
  if (f.handed)
    state = f.final_name.rfind("used_", 0) == 0
                ? "the consumer renamed the capsule to '" + f.final_name + "' (took ownership), so it calls the deleter"
                : "the capsule was left as '" + f.final_name + "', so its destructor calls the deleter";
  const std::string outcome = f.result.raised ? "from_dlpack raised " + f.result.text : "from_dlpack returned an array";
  ctx.check_as(Severity::must, f.deletes() == want, req, what + ": " + state + "; " + outcome,
               fmt::format("{} call(s)", want), fmt::format("{} call(s)", f.deletes()));
}

// The capsule kind a consumer can take: versioned if it asks for max_version >= 1.0.
bool speaks_versioned(PythonSubject& ps) { return ps.facts().consumer_versioned; }

// Why a consumer takes no versioned capsules, as the load-time probe found it.
std::string legacy_reason(PythonSubject& ps) {
  const auto& absent = ps.info().absent;
  auto it = absent.find("import_versioned");
  return it != absent.end() ? it->second : "legacy-only consumer: from_dlpack never offers max_version >= (1, 0)";
}

// A validator-made tensor on the package's home device (the first one its adapter declares):
// real CUDA memory for the CUDA kinds, the label alone for anything else.
MadeSpec home_spec(PythonSubject& ps) {
  MadeSpec spec;
  spec.device = ps.home_device();
  const int t = static_cast<int>(spec.device.device_type);
  spec.device_memory = t == kDLCUDA || t == kDLCUDAHost || t == kDLCUDAManaged;
  return spec;
}

Feed feed(CaseContext& ctx, PythonSubject& ps, const MadeSpec& spec, bool versioned,
          py::dict kwargs = py::dict(), const std::function<void(ProbeConfig&)>& tweak = {}) {
  ctx.phase("setup");
  Feed f;
  f.versioned = versioned;
  f.made = MadeTensor::make(spec, versioned);
  if (!f.made) ctx.harness_error("could not build the test tensor");
  f.snapshot();
  ProbeConfig cfg;
  cfg.managed = versioned ? static_cast<void*>(f.made->versioned()) : static_cast<void*>(f.made->legacy());
  cfg.versioned = versioned;
  cfg.capsule_name = versioned ? kVersionedName : kLegacyName;
  cfg.destructor_deletes = true;  // a producer's capsule: deletes if it dies unconsumed
  cfg.device = spec.device;
  if (tweak) tweak(cfg);
  f.probe = make_probe(cfg);
  ctx.phase("import");
  f.result = attempt([&] { return ps.from_dlpack(f.probe, kwargs); });
  return f;
}

Feed feed_plain(CaseContext& ctx, PythonSubject& ps, py::dict kwargs = py::dict()) {
  MadeSpec spec = home_spec(ps);
  return feed(ctx, ps, spec, speaks_versioned(ps), std::move(kwargs));
}

// Values of the imported array, compared with the tensor's pattern ("" when equal).
std::string values_differ(PythonSubject& ps, py::handle array, const MadeTensor& made) {
  try {
    std::string got = py::bytes(ps.adapter().attr("to_bytes")(array)).cast<std::string>();
    const std::vector<uint8_t> g(got.begin(), got.end());
    if (g == made.expected()) return "";
    return describe_mismatch(made.spec().dtype, made.expected(), g);
  } catch (py::error_already_set& e) {
    return "to_bytes raised " + describe(e);
  }
}

// `stream` of every recorded __dlpack__ call (None when not passed).
std::vector<py::object> streams(Probe& p) {
  std::vector<py::object> out;
  for (auto call : p.calls()) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(call);
    if (py::str(t[0]).cast<std::string>() != "__dlpack__") continue;
    py::dict kw = py::reinterpret_borrow<py::dict>(t[1]);
    out.push_back(kw.contains("stream") ? py::reinterpret_borrow<py::object>(kw["stream"]) : py::none());
  }
  return out;
}

std::string calls_text(Probe& p) { return py::repr(p.calls()).cast<std::string>(); }

std::optional<std::pair<int, int>> device_of(py::handle array) {
  try {
    py::tuple d = array.attr("__dlpack_device__")();
    return std::pair<int, int>{py::int_(d[0]).cast<int>(), py::int_(d[1]).cast<int>()};
  } catch (py::error_already_set&) {
  } catch (const py::cast_error&) {
  }
  return std::nullopt;
}

// ---- CAP ----------------------------------------------------------------------------------

// Whether the imported array views the producer's memory: the source's first element is
// overwritten for a moment and the array read back (host memory only; nullopt when it cannot
// be told, e.g. device memory or an array the adapter cannot read).
std::optional<bool> views_source(PythonSubject& ps, py::handle array, const Feed& f) {
  if (f.made->spec().device_memory || f.made->deleter_calls() > 0 || f.made->expected().empty()) return std::nullopt;
  auto* first = reinterpret_cast<uint8_t*>(f.source_address());
  const size_t n = std::min<size_t>(f.made->expected().size(), 4);
  std::vector<uint8_t> saved(first, first + n);
  std::memset(first, 0x5A, n);
  std::optional<bool> out;
  try {
    std::string got = py::bytes(ps.adapter().attr("to_bytes")(array)).cast<std::string>();
    out = got.size() >= n && std::memcmp(got.data(), first, n) == 0;
  } catch (py::error_already_set&) {
  }
  std::memcpy(first, saved.data(), n);
  return out;
}

void capsule_renamed(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (f.result.raised) ctx.check(false, "CAP-05", "the consumer imports a plain float32 probe tensor", "an array", f.result.what());
    const std::string name = capsule_name(f.p().last_capsule());
    const std::string want = f.versioned ? kUsedVersionedName : kUsedLegacyName;
    if (name != want && name.rfind("used_", 0) != 0) {
      // The Python spec: the consumer "must transfer ownership ... by renaming the capsule". One
      // that copies the data and never takes ownership leaves the capsule to its destructor,
      // which releases the tensor once: lawful. One that keeps a view of memory it does not own
      // is not.
      const auto view = views_source(ps, f.result.value, f);
      if (view && !*view) {
        ctx.check_as(Severity::may, true, "CAP-05", "copied the data without taking ownership");
        ctx.note("from_dlpack copied the tensor and left the capsule unconsumed ('" + name +
                 "'): its destructor releases the tensor (lawful: no ownership was taken)");
        f.settle(ctx);
        check_deleted_once(ctx, f, "DEL-02", "the tensor is deleted exactly once in the end");
        return;
      }
    }
    ctx.check(name == want, "CAP-05", "taking ownership renames the capsule to its used_ name", "'" + want + "'",
              "'" + name + "'");
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "the tensor is deleted exactly once in the end");
  });
}

void capsule_refused(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    for (const char* name : {v ? kUsedVersionedName : kUsedLegacyName, "foo"}) {
      MadeSpec spec = home_spec(ps);
      Feed f = feed(ctx, ps, spec, v, py::dict(), [&](ProbeConfig& c) { c.capsule_name = name; });
      const std::string what = fmt::format("a capsule named '{}'", name);
      ctx.check(f.result.raised, "CAP-06", what + " is refused with an exception", "an exception", f.result.what());
      f.settle(ctx);
      ctx.check(f.deletes() == 0, "CAP-06", what + " is refused without calling any deleter", "0 calls",
                fmt::format("{} call(s)", f.deletes()));
    }
  });
}

// ---- VER / CAP-09 -------------------------------------------------------------------------

void struct_from_name_legacy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // The probe ignores max_version (whatever the consumer asks) and hands out a legacy struct.
    MadeSpec spec = home_spec(ps);
    Feed f = feed(ctx, ps, spec, false);
    py::object kw = first_dlpack_kwargs(f.p());
    if (!ctx.check(!f.result.raised, "VER-05",
                   "a 'dltensor' capsule answering " + py::repr(kw).cast<std::string>() + " is imported",
                   "an array", f.result.what()))
      return;
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check(diff.empty(), "CAP-09", "the struct is read as the kind its capsule name says (DLManagedTensor)",
              "the pattern", diff);
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

void struct_minor_ahead(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!speaks_versioned(ps)) ctx.skip(legacy_reason(ps));
    const DLPackVersion asked = ps.facts().consumer_max;
    MadeSpec spec = home_spec(ps);
    spec.version = DLPackVersion{asked.major, asked.minor + 1};
    Feed f = feed(ctx, ps, spec, true);
    const std::string what = fmt::format("a versioned capsule stamped {}.{} (one minor above max_version={}.{})",
                                         spec.version.major, spec.version.minor, asked.major, asked.minor);
    if (!ctx.check(!f.result.raised, "VER-05", what + " is imported", "an array", f.result.what())) {
      f.settle(ctx);
      check_deleted_once(ctx, f, "DEL-08", "a refused tensor is deleted exactly once");
      return;
    }
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check(diff.empty(), "CAP-09", what + " is read as a DLManagedTensorVersioned", "the pattern", diff);
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

// VER-03. dlpack.h (DLPackVersion): "If an obtained DLPack tensor has a major version that
// disagrees with the version number specified in this header file (i.e. major !=
// DLPACK_MAJOR_VERSION), the consumer must call the deleter (and it is safe to do so). It is not
// safe to access any other fields as the memory layout will have changed." That holds for 2.0
// and for 0.8 in a versioned capsule alike (checklist, corrected 2026-11-22). dl_tensor lies on
// a guard page: reading it kills the worker (a crash in phase import).
void other_major(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!speaks_versioned(ps)) ctx.skip(legacy_reason(ps));
    MadeSpec spec = home_spec(ps);
    spec.version = ctx.param("major") == "0" ? DLPackVersion{0, 8} : DLPackVersion{2, 0};
    spec.guard_after_prefix = true;
    const std::string what = fmt::format("a versioned tensor stamped {}.{}", spec.version.major, spec.version.minor);
    Feed f = feed(ctx, ps, spec, true);
    ctx.phase("inspect");
    ctx.check(f.result.raised, "VER-03", what + " is refused (an exception): its layout is unknown", "an exception",
              f.result.what());
    if (f.result.raised && !f.result.is("BufferError"))
      ctx.note(what + " was refused with " + f.result.type + " (ERR-07 prefers BufferError)");
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08", "the refused tensor is deleted exactly once after the capsule is dropped");
  });
}

void minor99(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!speaks_versioned(ps)) ctx.skip(legacy_reason(ps));
    MadeSpec spec = home_spec(ps);
    spec.version = DLPackVersion{1, 99};
    Feed f = feed(ctx, ps, spec, true);
    if (ctx.check(!f.result.raised, "VER-04", "a float32 tensor stamped 1.99 is imported", "an array", f.result.what())) {
      const std::string diff = values_differ(ps, f.result.value, *f.made);
      ctx.check(diff.empty(), "VER-04", "... with the right values", "the pattern", diff);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

void legacy_fallback(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    Feed f = feed(ctx, ps, spec, false, py::dict(), [](ProbeConfig& c) { c.legacy_signature = true; });
    ctx.check(!f.result.raised, "VER-10",
              "a pre-2023.12 producer (__dlpack__(*, stream=None) only) is imported", "an array",
              f.result.what() + "; calls " + calls_text(f.p()));
    py::object kw = first_dlpack_kwargs(f.p());
    const bool asked = !kw.is_none() && py::dict(kw).contains("max_version");
    ctx.check(asked, "VER-10", "the first __dlpack__ call offers max_version (then retries without it on TypeError)",
              "max_version in the first call", py::repr(kw).cast<std::string>());
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

// from_dlpack(x, copy=...) where the adapter's from_dlpack has no such keyword: a skip.
void skip_if_no_copy_keyword(CaseContext& ctx, Feed& f) {
  if (f.result.is("TypeError") && f.p().dlpack_calls() == 0)
    ctx.skip("from_dlpack does not accept copy= (" + f.result.text +
             "): a pre-2023.12 from_dlpack(x, /) signature, so copy requests cannot be made");
}

// from_dlpack(probe, copy=True), the probe handing out a separate copy (flagged IS_COPIED
// when versioned) for copy=True; skips when from_dlpack takes no copy=.
Feed feed_copy_true(CaseContext& ctx, PythonSubject& ps, bool v) {
  MadeSpec spec = home_spec(ps), copied = home_spec(ps);
  copied.flags = v ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
  auto copy = MadeTensor::make(copied, v);
  py::dict kw;
  kw["copy"] = true;
  Feed f = feed(ctx, ps, spec, v, kw, [&](ProbeConfig& c) {
    c.copy_managed = v ? static_cast<void*>(copy->versioned()) : static_cast<void*>(copy->legacy());
    c.copy_versioned = v;
  });
  f.copy = std::move(copy);
  skip_if_no_copy_keyword(ctx, f);
  return f;
}

void legacy_fallback_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    py::dict kw;
    kw["copy"] = true;
    Feed f = feed(ctx, ps, spec, false, kw, [](ProbeConfig& c) { c.legacy_signature = true; });
    skip_if_no_copy_keyword(ctx, f);
    if (f.result.raised) {
      ctx.check(true, "VER-11", "copy=True with a producer that cannot take copy= is refused: " + f.result.text);
    } else {
      auto addr = library_address(f.result.value);
      if (!addr) ctx.skip("the imported array exposes no address (__array_interface__ / data_ptr())");
      ctx.check(*addr != f.source_address(), "VER-11",
                "copy=True on the legacy fallback still yields a copy, never an alias",
                "an address other than the producer's", fmt::format("the producer's own {:#x}", *addr));
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-02", "deleted exactly once in the end");
  });
}

// ---- KW ------------------------------------------------------------------------------------

void copy_keyword(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    {
      Feed f = feed_copy_true(ctx, ps, v);
      if (!ctx.check(!f.result.raised, "KW-07", "from_dlpack(copy=True) of a CPU tensor succeeds", "an array",
                     f.result.what()))
        return;
      auto addr = library_address(f.result.value);
      if (!addr) ctx.skip("the imported array exposes no address (__array_interface__ / data_ptr())");
      const size_t nbytes = f.made->expected().size();
      const uintptr_t src = f.source_address();
      const bool overlaps = *addr < src + nbytes && src < *addr + nbytes;
      ctx.check(!overlaps, "KW-07", "from_dlpack(copy=True) never aliases the producer's memory",
                fmt::format("memory disjoint from {:#x}", src), fmt::format("{:#x}", *addr));
      const std::string diff = values_differ(ps, f.result.value, *f.made);
      ctx.check(diff.empty(), "KW-07", "the copy holds the producer's values", "the pattern", diff);
      // SEM-02: writing into the copy leaves the source alone.
      py::object w = ps.adapter().attr("is_writable")(f.result.value);
      // (A consumer that copied and released the source at once leaves no source to compare.)
      if (!overlaps && !w.is_none() && w.cast<bool>() && nbytes > 0 && ps.home_device().device_type == kDLCPU &&
          f.made->deleter_calls() == 0) {
        std::memset(reinterpret_cast<void*>(*addr), 0x5A, nbytes);
        std::vector<uint8_t> now;
        std::string why;
        const bool read = gather_elements(f.tensor(), now, why);
        ctx.check_as(Severity::should, read && now == f.made->expected(), "SEM-02",
                     "mutating a copy=True result leaves the source unchanged", "source intact",
                     read ? "source changed" : why);
      }
      f.settle(ctx);
      check_deleted_once(ctx, f, "DEL-02", "the source tensor is deleted exactly once");
    }
    {
      MadeSpec spec = home_spec(ps);
      py::dict kw;
      kw["copy"] = false;
      Feed f = feed(ctx, ps, spec, v, kw);
      if (f.result.raised) {
        ctx.check_as(Severity::should, f.result.is("BufferError"), "KW-07",
                     "from_dlpack(copy=False) that does not alias refuses with BufferError", "BufferError",
                     f.result.text);
      } else {
        auto addr = library_address(f.result.value);
        if (addr)
          ctx.check(*addr == f.source_address(), "KW-07", "from_dlpack(copy=False) aliases the producer's memory",
                    fmt::format("{:#x}", f.source_address()), fmt::format("{:#x}", *addr));
      }
      f.settle(ctx);
    }
  });
}

// KW-08 (SHOULD, derived): the array API puts copies on the producer (__dlpack__, copy: "If
// True, the function must always copy (performed by the producer ...)"), so from_dlpack
// forwards copy= and the target device (as dl_device=) to __dlpack__.
void forwards_keywords(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    {
      Feed f = feed_copy_true(ctx, ps, v);
      py::object first = first_dlpack_kwargs(f.p());
      const bool forwarded = !first.is_none() && py::dict(first).contains("copy") &&
                             py::dict(first)["copy"].ptr() == Py_True;
      ctx.check(forwarded, "KW-08", "from_dlpack(copy=True) forwards copy=True to __dlpack__ (the producer copies)",
                "copy=True in the __dlpack__ call", calls_text(f.p()));
      f.settle(ctx);
    }
    py::object a = ps.adapter();
    py::dict kw;
    kw["device"] = py::hasattr(a, "cpu_device") ? a.attr("cpu_device")() : py::str("cpu");
    Feed f = feed(ctx, ps, home_spec(ps), v, kw);
    if (f.result.is("TypeError") && f.p().dlpack_calls() == 0) {
      ctx.note("from_dlpack takes no device= (" + f.result.text + "): dl_device forwarding not observable");
      f.settle(ctx);
      return;
    }
    py::object first = first_dlpack_kwargs(f.p());
    bool forwarded = false;
    if (!first.is_none() && py::dict(first).contains("dl_device")) {
      try {
        forwarded = py::dict(first)["dl_device"].cast<std::pair<int, int>>() == std::pair<int, int>{kDLCPU, 0};
      } catch (...) {
      }
    }
    ctx.check(forwarded, "KW-08", "from_dlpack(device=cpu) forwards the target as dl_device=(1, 0) to __dlpack__",
              "dl_device=(1, 0) in the __dlpack__ call", calls_text(f.p()));
    f.settle(ctx);
  });
}

void zero_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (!ctx.check(!f.result.raised, "KW-09", "a float32 CPU tensor is imported", "an array", f.result.what())) return;
    auto addr = library_address(f.result.value);
    if (!addr) ctx.skip("the imported array exposes no address (__array_interface__ / data_ptr())");
    ctx.check(*addr == f.source_address(), "KW-09", "the default import is zero-copy (a view of the producer's memory)",
              fmt::format("{:#x}", f.source_address()), fmt::format("{:#x}", *addr));
    f.settle(ctx);
  });
}

void any_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // A plain Python class (no exchange-API attribute) forwarding to a probe.
    py::dict ns;
    py::exec(R"(
class MinimalProducer:
    def __init__(self, inner):
        self._inner = inner
    def __dlpack__(self, **kwargs):
        return self._inner.__dlpack__(**kwargs)
    def __dlpack_device__(self):
        return self._inner.__dlpack_device__()
)", ns);
    const bool v = speaks_versioned(ps);
    MadeSpec spec = home_spec(ps);
    auto made = MadeTensor::make(spec, v);
    ProbeConfig cfg;
    cfg.managed = v ? static_cast<void*>(made->versioned()) : static_cast<void*>(made->legacy());
    cfg.versioned = v;
    cfg.capsule_name = v ? kVersionedName : kLegacyName;
    cfg.destructor_deletes = true;
    py::object probe = make_probe(cfg);
    py::object obj = ns["MinimalProducer"](probe);
    ctx.phase("import");
    Call c = attempt([&] { return ps.from_dlpack(obj); });
    if (ctx.check(!c.raised, "KW-10", "an instance of a plain Python class with __dlpack__/__dlpack_device__ imports",
                  "an array", c.what())) {
      ctx.check_as(Severity::should, true, "XAPI-22", "a type without __dlpack_c_exchange_api__ imports through __dlpack__");
      const std::string diff = values_differ(ps, c.value, *made);
      ctx.check(diff.empty(), "KW-10", "... with the right values", "the pattern", diff);
    } else {
      ctx.check_as(Severity::should, false, "XAPI-22", "a type without __dlpack_c_exchange_api__ imports", "an array",
                   c.what());
    }
    c.value = py::none();
    obj = py::none();
    probe = py::none();
    gc_collect(ctx);
    if (made->deleter_calls() == 0) (void)made.release();
  });
}

// ---- ERR ----------------------------------------------------------------------------------

void error_propagated(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    ProbeConfig cfg;
    cfg.raise_type = "BufferError";
    cfg.raise_message = "probe refuses: dlpack-validate ERR-03";
    py::object probe = make_probe(cfg);
    Call c = attempt([&] { return ps.from_dlpack(probe); });
    ctx.check(c.is("BufferError"), "ERR-03", "a BufferError raised by __dlpack__ propagates out of from_dlpack",
              "BufferError", c.what());
    if (c.is("BufferError") && c.text.find("dlpack-validate ERR-03") == std::string::npos)
      ctx.note("the propagated BufferError does not carry the producer's message: " + c.text);
  });
}

// ERR-04. from_dlpack's Raises (array API draft): "AttributeError - If the __dlpack__ and
// __dlpack_device__ methods are not present on the input array." Graded SHOULD (checklist,
// corrected 2026-11-22): another exception is a warning; importing object() is a failure (it
// is not an array of anything).
void no_methods(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object plain = py::module_::import("builtins").attr("object")();
    Call c = attempt([&] { return ps.from_dlpack(plain); });
    if (c.is("AttributeError")) {
      ctx.check(true, "ERR-04", "from_dlpack(object()) raises AttributeError");
      return;
    }
    if (!c.raised) {
      ctx.check_as(Severity::must, false, "ERR-04", "from_dlpack(object()) must not succeed (object() has no DLPack methods)",
                   "AttributeError", c.what());
      return;
    }
    // A library that also takes raw capsules may treat object() as a bad capsule: say so.
    MadeSpec spec;
    auto made = MadeTensor::make(spec, false);
    py::object cap = py::reinterpret_steal<py::object>(PyCapsule_New(made->legacy(), kLegacyName, nullptr));
    Call raw = attempt([&] { return ps.from_dlpack(cap); });
    const bool takes_capsules = !raw.raised;
    raw.value = py::none();
    cap = py::none();
    gc_collect(ctx);
    if (made->deleter_calls() == 0) (void)made.release();
    ctx.check_as(Severity::should, false, "ERR-04",
                 std::string("from_dlpack(object()) raises AttributeError") +
                     (takes_capsules ? " (this from_dlpack also accepts raw capsules, which is why object() is "
                                       "treated as one)"
                                     : ""),
                 "AttributeError", c.what());
  });
}

void rejection_type(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    spec.dtype = DLDataType{200, 32, 1};  // no such dtype code
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    if (!f.result.raised) {
      // DTYPE-08 is a SHOULD: a container that keeps the code as it is does not misread it.
      ctx.check_as(Severity::should, false, "DTYPE-08", "a tensor with dtype code 200 is refused", "BufferError",
                   f.result.what());
    } else {
      ctx.check(f.result.is("BufferError"), "ERR-07", "the consumer's rejection (unknown dtype) is a BufferError",
                "BufferError", f.result.text);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08",
                       "the rejected tensor is deleted exactly once (the capsule's destructor, since it stays unconsumed)");
  });
}

// ---- DEV ----------------------------------------------------------------------------------

void device_foreign(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec;
    spec.device = DLDevice{kDLVulkan, 0};  // a label only: the memory is host memory
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    if (!f.result.raised) {
      auto d = device_of(f.result.value);
      ctx.check(false, "DEV-04", "a tensor on kDLVulkan is refused by a consumer that cannot use it", "BufferError",
                "imported it" + (d ? fmt::format(" as device ({}, {})", d->first, d->second) : std::string()));
    } else if (f.result.is("TypeError")) {
      ctx.check(false, "DEV-04", "an unusable device is refused with BufferError (TypeError is the pre-1.0 guidance)",
                "BufferError", f.result.text);
    } else {
      ctx.check(f.result.is("BufferError"), "DEV-04", "an unusable device (kDLVulkan) is refused with BufferError",
                "BufferError", f.result.text);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08", "the refused tensor is deleted exactly once");
  });
}

void device_same(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (!ctx.check(!f.result.raised, "DEV-07", "a CPU tensor is imported", "an array", f.result.what())) return;
    auto d = device_of(f.result.value);
    if (!d) ctx.skip("the imported array has no __dlpack_device__ to say where it lives");
    ctx.check(*d == std::pair<int, int>{kDLCPU, 0}, "DEV-07", "from_dlpack(x) with device=None stays on x's device",
              "(1, 0)", fmt::format("({}, {})", d->first, d->second));
    f.settle(ctx);
  });
}

// A probe labelled with `device` (host memory under the label): which streams it was given.
Feed stream_feed(CaseContext& ctx, PythonSubject& ps, DLDevice device) {
  MadeSpec spec;
  spec.device = device;
  return feed(ctx, ps, spec, speaks_versioned(ps));
}

void device_query_first(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    int with_stream = 0;
    for (DLDevice dev : {DLDevice{kDLCPU, 0}, DLDevice{kDLCUDA, 0}, DLDevice{kDLROCM, 0}}) {
      Feed f = stream_feed(ctx, ps, dev);
      bool queried = false;
      for (auto call : f.p().calls()) {
        py::tuple t = py::reinterpret_borrow<py::tuple>(call);
        const std::string name = py::str(t[0]);
        if (name == "__dlpack_device__") queried = true;
        if (name != "__dlpack__") continue;
        py::dict kw = py::reinterpret_borrow<py::dict>(t[1]);
        if (!kw.contains("stream") || kw["stream"].is_none()) continue;
        ++with_stream;
        ctx.check(queried, "DEV-09",
                  fmt::format("a stream is passed to a {} producer only after asking __dlpack_device__", device_name(dev)),
                  "__dlpack_device__ first", calls_text(f.p()));
      }
      f.settle(ctx);
    }
    if (with_stream == 0) ctx.check(true, "DEV-09", "no stream was passed without knowing the device (none was passed at all)");
  });
}

void stream_rules(CaseContext& ctx, DLDevice dev, const char* req, const char* rule,
                  const std::function<bool(const py::object&)>& allowed) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = stream_feed(ctx, ps, dev);
    const std::vector<py::object> seen = streams(f.p());
    const std::string result = f.result.what();
    const std::string calls = calls_text(f.p());
    f.settle(ctx);
    if (seen.empty())
      ctx.skip(fmt::format("the consumer refused the {}-labelled producer before calling __dlpack__ ({}), so "
                           "no stream was recorded",
                           device_name(dev), result));
    for (const py::object& s : seen)
      ctx.check(allowed(s), req, fmt::format("the stream passed for a {} producer follows the rule: {}",
                                             device_name(dev), rule),
                rule, py::repr(s).cast<std::string>() + " in " + calls);
  });
}

bool is_int(const py::object& s) { return py::isinstance<py::int_>(s) && !py::isinstance<py::bool_>(s); }

void stream_cuda(CaseContext& ctx) {
  stream_rules(ctx, DLDevice{kDLCUDA, 0}, "STRM-01", "None, -1, 1, 2 or a handle > 2 (never 0)",
               [](const py::object& s) {
                 if (s.is_none()) return true;
                 if (!is_int(s)) return false;
                 const long long v = s.cast<long long>();
                 return v == -1 || v >= 1;
               });
}

void stream_rocm(CaseContext& ctx) {
  stream_rules(ctx, DLDevice{kDLROCM, 0}, "STRM-02", "None, -1, 0 or a handle > 2 (never 1 or 2)",
               [](const py::object& s) {
                 if (s.is_none()) return true;
                 if (!is_int(s)) return false;
                 const long long v = s.cast<long long>();
                 return v == -1 || v == 0 || v > 2;
               });
}

void stream_cpu(CaseContext& ctx) {
  stream_rules(ctx, DLDevice{kDLCPU, 0}, "STRM-03", "None (or no stream keyword)",
               [](const py::object& s) { return s.is_none(); });
}

// DEV-08: from_dlpack(x, device=<cpu>) of a device array yields host data: the consumer asks
// the producer for a host copy (dl_device=(kDLCPU, 0)) or copies itself; a library that cannot
// at all raises BufferError. The probe's CUDA-labelled tensor holds bytes that are not the
// values (without a GPU a CPU consumer cannot legitimately read that memory): only the host
// copy, or a real device-to-host copy, holds the pattern.
void device_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    py::object a = ps.adapter();
    py::object cpu = py::hasattr(a, "cpu_device") ? a.attr("cpu_device")() : py::str("cpu");
    MadeSpec spec, host;
    spec.device = DLDevice{kDLCUDA, 0};
    host.flags = v ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    auto copy = MadeTensor::make(host, v);
    py::dict kw;
    kw["device"] = cpu;
    Feed f = feed(ctx, ps, spec, v, kw, [&](ProbeConfig& c) {
      c.host_managed = v ? static_cast<void*>(copy->versioned()) : static_cast<void*>(copy->legacy());
      c.host_versioned = v;
      const DLTensor& t = v ? static_cast<DLManagedTensorVersioned*>(c.managed)->dl_tensor
                            : static_cast<DLManagedTensor*>(c.managed)->dl_tensor;
      std::memset(static_cast<char*>(t.data) + t.byte_offset, 0xA5, copy->expected().size());
    });
    f.copy = std::move(copy);
    if (f.result.is("TypeError") && f.p().dlpack_calls() == 0)
      ctx.skip("from_dlpack does not accept device= (" + f.result.text +
               "): a pre-2023.12 from_dlpack(x, /) signature");
    const std::string calls = calls_text(f.p());
    if (f.result.raised) {
      ctx.check(f.result.is("BufferError"), "DEV-08",
                "a consumer that cannot bring a device array to the CPU refuses with BufferError", "BufferError",
                f.result.text + " after " + calls);
    } else {
      const std::string diff = values_differ(ps, f.result.value, *f.made);
      ctx.check(diff.empty(), "DEV-08",
                "from_dlpack(x, device=cpu) of a CUDA array holds the array's values in host memory (from a "
                "dl_device=(1, 0) copy or the consumer's own device-to-host copy)",
                "the pattern", diff + " (calls: " + calls + ")");
    }
    f.settle(ctx);
  });
}

// STRM-07: the stream a consumer passes is the one it computes on. The adapter names that
// stream (current_stream); a CUDA-labelled probe records what from_dlpack passes.
void stream_current(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const long long handle = current_cuda_stream(ctx, ps);
    Feed f = stream_feed(ctx, ps, DLDevice{kDLCUDA, 0});
    const std::vector<py::object> seen = streams(f.p());
    const std::string result = f.result.what();
    const std::string calls = calls_text(f.p());
    f.settle(ctx);
    if (seen.empty())
      ctx.skip(fmt::format("the consumer refused the cuda-labelled producer before calling __dlpack__ ({}), so "
                           "no stream was recorded", result));
    // The legacy default stream's handle is 0; it is passed as 1 (or None, the default).
    const std::string want = handle == 0 ? "1 or None (its current stream is the legacy default stream)"
                                         : fmt::format("{:#x} (its current stream)", handle);
    for (const py::object& s : seen) {
      bool ok = false;
      if (s.is_none()) ok = handle == 0;
      else if (is_int(s)) {
        const long long v = s.cast<long long>();
        ok = v == -1 || v == handle || (handle == 0 && v == 1);
      }
      ctx.check(ok, "STRM-07", "the stream passed to a CUDA producer is the one the consumer computes on (-1: it "
                               "synchronises itself)",
                want, py::repr(s).cast<std::string>() + " in " + calls);
    }
  });
}

// ---- DEL, FLAG ----------------------------------------------------------------------------

void deleter_once(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    if (!ctx.check(!f.result.raised, "DEL-02", "a float32 CPU tensor is imported", "an array", f.result.what())) return;
    gc_collect(ctx);
    const int early = f.deletes();
    if (early > 0) {
      // A consumer that copied during import may release the tensor at once ("when the borrowing
      // framework doesn't need the tensor", dlpack.h); the tensor's memory is poisoned then, so
      // the values below tell a copy from a dangling view.
      ctx.check(early == 1, "DEL-02", "a consumer that releases the tensor during import calls its deleter once",
                "1 call", fmt::format("{} call(s)", early));
      ctx.note("from_dlpack released the tensor during import (it copied the data: lawful)");
    }
    const std::string diff = values_differ(ps, f.result.value, *f.made);
    ctx.check(diff.empty(), "DEL-02",
              early ? "the imported array holds the values (its own copy: the released tensor's memory is poisoned)"
                    : "the imported array holds the values",
              "the pattern", diff);
    ctx.phase("release");
    f.settle(ctx);
    {
      py::gil_scoped_release nogil;
      await_calls([&] { return f.deletes(); }, 1);
    }
    ctx.check(f.deletes() == 1, "DEL-02", "the deleter runs exactly once after the array dies", "1 call",
              fmt::format("{} call(s)", f.deletes()));
  });
}

void deleter_null(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    MadeSpec spec = home_spec(ps);
    spec.deleter = DeleterKind::null;
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    ctx.check(!f.result.raised, "DEL-03", "a tensor whose deleter is NULL is imported", "an array", f.result.what());
    ctx.phase("release");
    f.settle(ctx);
    ctx.check(true, "DEL-03", "the array over a NULL-deleter tensor died without a crash");
  });
}

void read_only_flag(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    if (!speaks_versioned(ps)) ctx.skip(legacy_reason(ps) + " (legacy capsules carry no flags)");
    MadeSpec spec = home_spec(ps);
    spec.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    Feed f = feed(ctx, ps, spec, true);
    if (ctx.check(!f.result.raised, "FLAG-04", "a READ_ONLY tensor is imported (not refused)", "an array",
                  f.result.what())) {
      py::object w = ps.adapter().attr("is_writable")(f.result.value);
      if (w.is_none())
        ctx.check_as(Severity::may, true, "FLAG-04", "the library has no read-only arrays (the flag is ignored)");
      else
        ctx.check(!w.cast<bool>(), "FLAG-04", "the imported array of a READ_ONLY tensor is read-only", "read-only",
                  "writable");
    }
    f.settle(ctx);
  });
}

}  // namespace
}  // namespace dlpv::py_shim

DLPV_CASE_UNIT(python_consumer) {
  using namespace dlpv;
  using namespace dlpv::py_shim;
  const Severity M = Severity::must, S = Severity::should;
  const std::vector<std::string> I = {"import_legacy"};
  // Cases about the calling protocol of from_dlpack (keywords, streams, call order, exceptions).
  const std::vector<std::string> P = {"import_legacy", "consumer_protocol"};
  add_python_case(reg, "python.consumer.capsule_renamed", "from_dlpack renames the capsule it consumes to used_*",
                  {"CAP-05", "DEL-02"}, M, capsule_renamed, I);
  add_python_case(reg, "python.consumer.capsule_refused",
                  "used_* and foreign-named capsules are refused without any deleter call", {"CAP-06"}, M,
                  capsule_refused, I);
  add_python_case(reg, "python.consumer.struct_from_name.legacy",
                  "a 'dltensor' capsule answering max_version is read as a DLManagedTensor",
                  {"CAP-09", "VER-05", "DEL-02"}, M, struct_from_name_legacy, I);
  add_python_case(reg, "python.consumer.struct_from_name.minor_ahead",
                  "a versioned capsule with a minor above the request is imported", {"VER-05", "CAP-09", "DEL-08"}, M,
                  struct_minor_ahead, I);
  for (const char* major : {"2", "0"}) {
    CaseInfo c;
    c.id = major[0] == '2' ? "python.consumer.version.major_mismatch" : "python.consumer.version.major0";
    c.title = fmt::format("a versioned tensor stamped {} is refused without reading past its prefix, deleted exactly once",
                          major[0] == '2' ? "2.0" : "0.8");
    c.requirements = {"VER-03", "DEL-08"};
    c.role = Role::python_protocol;
    c.params = {{"device", "cpu:0"}, {"major", major}};
    c.needs = I;
    c.kinds = {"python"};
    c.body = other_major;
    reg.add(std::move(c));
  }
  add_python_case(reg, "python.consumer.version.minor99", "a tensor stamped 1.99 is imported", {"VER-04", "DEL-02"}, S,
                  minor99, I);
  add_python_case(reg, "python.consumer.legacy_fallback",
                  "a stream-only __dlpack__ is imported after a first call offering max_version", {"VER-10", "DEL-02"},
                  S, legacy_fallback, P);
  add_python_case(reg, "python.consumer.legacy_fallback.copy",
                  "copy=True is never dropped on the legacy fallback (copy or error, never an alias)",
                  {"VER-11", "DEL-02"}, S, legacy_fallback_copy, P);
  add_python_case(reg, "python.consumer.kw.copy",
                  "from_dlpack(copy=True) never aliases (and may be mutated); copy=False aliases or raises",
                  {"KW-07", "SEM-02", "DEL-02"}, M, copy_keyword, P);
  add_python_case(reg, "python.consumer.kw.forwards_copy",
                  "from_dlpack forwards copy=True as copy= and device=cpu as dl_device= to __dlpack__", {"KW-08"}, S,
                  forwards_keywords, P);
  add_python_case(reg, "python.consumer.kw.zero_copy", "the default import is a view of the producer's memory",
                  {"KW-09"}, M, zero_copy, I);
  add_python_case(reg, "python.consumer.kw.any_object",
                  "any object with __dlpack__ and __dlpack_device__ imports (no exchange API needed)",
                  {"KW-10", "XAPI-22"}, M, any_object, P);
  add_python_case(reg, "python.consumer.error.propagated", "BufferError from __dlpack__ propagates", {"ERR-03"}, M,
                  error_propagated, P);
  add_python_case(reg, "python.consumer.error.no_methods", "from_dlpack(object()) raises AttributeError", {"ERR-04"},
                  S, no_methods, P);
  add_python_case(reg, "python.consumer.error.rejection_type",
                  "a tensor the consumer rejects (unknown dtype) raises BufferError and is deleted once",
                  {"ERR-07", "DEL-08"}, S, rejection_type, I);
  add_python_case(reg, "python.consumer.device.foreign",
                  "a kDLVulkan tensor is refused with BufferError and deleted once", {"DEV-04", "DEL-08"}, S,
                  device_foreign, I);
  add_python_case(reg, "python.consumer.device.same", "the imported array lives on the producer's device",
                  {"DEV-07"}, M, device_same, I);
  add_python_case(reg, "python.consumer.device.query_first",
                  "__dlpack_device__ is called before a stream is passed to __dlpack__", {"DEV-09"}, S,
                  device_query_first, P);
  add_python_case(reg, "python.consumer.stream.cuda", "a CUDA producer is never given stream 0", {"STRM-01"}, M,
                  stream_cuda, P);
  add_python_case(reg, "python.consumer.stream.rocm", "a ROCm producer is never given stream 1 or 2", {"STRM-02"}, M,
                  stream_rocm, P);
  add_python_case(reg, "python.consumer.device.to_cpu",
                  "from_dlpack(x, device=cpu) of a CUDA array yields its values on the host", {"DEV-08"}, M,
                  device_cpu, P);
  add_python_case(reg, "python.consumer.stream.current",
                  "the stream given to a CUDA producer is the consumer's current stream", {"STRM-07"}, M,
                  stream_current, P);
  add_python_case(reg, "python.consumer.stream.cpu", "a CPU producer is given stream=None", {"STRM-03"}, M,
                  stream_cpu, P);
  add_python_case(reg, "python.consumer.deleter.once",
                  "the deleter runs once, after the imported array dies, never while it lives", {"DEL-02"}, M,
                  deleter_once, I);
  add_python_case(reg, "python.consumer.deleter.null", "a NULL deleter is never called", {"DEL-03"}, M, deleter_null,
                  I);
  add_python_case(reg, "python.consumer.flags.read_only", "a READ_ONLY tensor imports as a read-only array",
                  {"FLAG-04"}, S, read_only_flag, I);
}
