// cases/python/consumer/kw.cpp: python.consumer.kw.*: from_dlpack's keywords: copy= (KW-07,
// SEM-02) and its forwarding with device= as dl_device= (KW-08), zero-copy by default (KW-09),
// any object with __dlpack__/__dlpack_device__ imports (KW-10, XAPI-22).
// SPDX-License-Identifier: Apache-2.0
#include <cstring>

#include <pybind11/eval.h>

#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

// from_dlpack(producer, copy=True), the scripted producer handing out a separate copy (flagged IS_COPIED
// when versioned) for copy=True; skips when from_dlpack takes no copy=. The source lies
// `misalign` bytes past a 256-byte boundary: a consumer may take another path for data at
// another alignment (JAX 0.10 imports 64-byte aligned data in place and copies the rest).
Feed feed_copy_true(CaseContext& ctx, PythonSubject& ps, bool v, size_t misalign) {
  MadeSpec spec = home_spec(ps), copied = home_spec(ps);
  spec.misalign = misalign;
  copied.flags = v ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
  auto copy = MadeTensor::make(copied, v);
  py::dict kw;
  kw["copy"] = true;
  Feed f = feed(ctx, ps, spec, v, kw, [&](ProducerScript& c) {
    c.copy_managed = v ? static_cast<void*>(copy->versioned()) : static_cast<void*>(copy->legacy());
    c.copy_versioned = v;
  });
  f.copy = std::move(copy);
  skip_if_no_copy_keyword(ctx, f);
  return f;
}

// What the imported array shows once the source's bytes are changed under it: "" when it
// still holds the pattern (a copy), else how it differs. The source is the validator's own
// memory (contiguous, on the host); its bytes are put back afterwards.
std::string seen_after_source_write(PythonSubject& ps, Feed& f) {
  auto* src = reinterpret_cast<uint8_t*>(f.source_address());
  const size_t nbytes = f.made->expected().size();
  std::vector<uint8_t> saved(src, src + nbytes);
  for (size_t i = 0; i < nbytes; ++i) src[i] = static_cast<uint8_t>(~saved[i]);
  std::string diff = values_differ(ps, f.result.value, *f.made);
  std::memcpy(src, saved.data(), nbytes);
  return diff;
}

void copy_keyword(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    const size_t misalign = misalign_named(ctx.info().params.at("align"));
    const bool host = ps.home_device().device_type == kDLCPU;
    {
      Feed f = feed_copy_true(ctx, ps, v, misalign);
      if (!ctx.check(!f.result.raised, "KW-07", "from_dlpack(copy=True) of a CPU tensor succeeds", "an array",
                     f.result.what()))
        return;
      const size_t nbytes = f.made->expected().size();
      // The array API: copy=True means the function "must always copy". Evidence that needs no
      // address from the library: change the source's bytes and look at the result through the
      // package's own reader.
      const std::string before = values_differ(ps, f.result.value, *f.made);
      ctx.check(before.empty(), "KW-07", "the copy holds the producer's values", "the pattern", before);
      bool aliased = false;
      if (host && nbytes > 0 && before.empty()) {
        const std::string after = seen_after_source_write(ps, f);
        aliased = !after.empty();
        ctx.check(!aliased, "KW-07",
                  "from_dlpack(copy=True) never aliases: writing the source afterwards leaves the result unchanged",
                  "the result unchanged", "the result changed with the source (it views the producer's memory): " + after);
      }
      auto addr = library_address(f.result.value);
      const uintptr_t src = f.source_address();
      const bool overlaps = addr && *addr < src + nbytes && src < *addr + nbytes;
      if (addr)
        ctx.check(!overlaps, "KW-07", "from_dlpack(copy=True) never aliases the producer's memory",
                  fmt::format("memory disjoint from {:#x}", src), fmt::format("{:#x}", *addr));
      else if (!host || nbytes == 0)
        ctx.skip("the imported array exposes no address (__array_interface__ / data_ptr()) and its source is not "
                 "host memory the validator can change");
      // SEM-02: writing into the copy leaves the source alone.
      py::object w = ps.adapter().attr("is_writable")(f.result.value);
      // (A consumer that copied and released the source at once leaves no source to compare.)
      if (addr && !overlaps && !aliased && !w.is_none() && w.cast<bool>() && nbytes > 0 && host &&
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
      spec.misalign = misalign;
      py::dict kw;
      kw["copy"] = false;
      Feed f = feed(ctx, ps, spec, v, kw);
      if (f.result.raised) {
        ctx.check_as(Severity::should, f.result.is("BufferError"), "KW-07",
                     "from_dlpack(copy=False) that does not alias refuses with BufferError", "BufferError",
                     f.result.text);
      } else {
        auto addr = library_address(f.result.value);
        if (addr) {
          ctx.check(*addr == f.source_address(), "KW-07", "from_dlpack(copy=False) aliases the producer's memory",
                    fmt::format("{:#x}", f.source_address()), fmt::format("{:#x}", *addr));
        } else if (host && !f.made->expected().empty() && values_differ(ps, f.result.value, *f.made).empty()) {
          const std::string after = seen_after_source_write(ps, f);
          ctx.check(!after.empty(), "KW-07",
                    "from_dlpack(copy=False) aliases: writing the source afterwards shows in the result",
                    "the result changed with the source", "the result unchanged (a silent copy)");
        }
      }
      f.settle(ctx);
    }
  });
}

DLPV_CASES {
  // python.consumer.kw.copy.a256 ... .a4: the source's data 256-, 64-, 16- or only 4-byte
  // aligned (float32's own alignment).
  Declare("python.consumer.kw.copy",
          "from_dlpack(copy=True) never aliases (and may be mutated); copy=False aliases or raises ({align} data)")
      .must({"KW-07", "SEM-02", "DEL-02"}).python()
      .combine("align", {"a256", "a64", "a16", "a4"})
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_copy_ignored", "consumer_copy_in_place_aligned"})
      .run(copy_keyword);
}

// KW-08 (SHOULD, derived): the array API puts copies on the producer (__dlpack__, copy: "If
// True, the function must always copy (performed by the producer ...)"), so from_dlpack
// forwards copy= and the target device (as dl_device=) to __dlpack__.
void forwards_keywords(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    {
      Feed f = feed_copy_true(ctx, ps, v, 0);
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

DLPV_CASES {
  Declare("python.consumer.kw.forwards_copy",
          "from_dlpack forwards copy=True as copy= and device=cpu as dl_device= to __dlpack__")
      .should({"KW-08"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_copy_not_forwarded"})
      .run(forwards_keywords);
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

DLPV_CASES {
  Declare("python.consumer.kw.zero_copy", "the default import is a view of the producer's memory")
      .must({"KW-09"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_always_copies"})
      .run(zero_copy);
}

void any_object(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // A package whose from_dlpack refuses every tensor (found at load) has this one finding:
    // KW-10's "takes any object that has __dlpack__ and __dlpack_device__"; every other import
    // case skips with the same fact.
    if (!ps.facts().refuses_imports.empty()) {
      ctx.check(false, "KW-10", "from_dlpack imports a plain float32 CPU tensor from an object with __dlpack__ and "
                "__dlpack_device__", "an array", ps.facts().refuses_imports);
      return;
    }
    for (const char* n : {need::import_legacy, need::consumer_protocol})
      if (!ps.info().has(n)) {
        const auto why = ps.info().absent.find(n);
        ctx.skip(why != ps.info().absent.end() ? why->second : std::string("the subject lacks ") + n);
      }
    // A plain Python class (no exchange-API attribute) forwarding to a scripted producer.
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
    // host memory for a package that takes none (dpnp 0.15): DEV-04 allows it; see feed()
    if (const std::string refused = ps.refuses_device(spec.device); !refused.empty()) ctx.skip(refused);
    auto made = MadeTensor::make(spec, v);
    ProducerScript cfg;
    cfg.managed = v ? static_cast<void*>(made->versioned()) : static_cast<void*>(made->legacy());
    cfg.versioned = v;
    cfg.capsule_name = v ? kVersionedName : kLegacyName;
    cfg.destructor_deletes = true;
    cfg.device = spec.device;
    py::object producer = make_producer(cfg);
    py::object obj = ns["MinimalProducer"](producer);
    ctx.phase("import");
    Call c = attempt([&] { return ps.from_dlpack(obj); });
    if (ctx.check(!c.raised, "KW-10", "an instance of a plain Python class with __dlpack__/__dlpack_device__ imports",
                  "an array", c.what())) {
      ctx.check_as(Severity::should, true, "XAPI-22", "a type without __dlpack_c_exchange_api__ imports through __dlpack__");
      const std::string diff = values_differ(ps, c.value, *made);
      ctx.check_as(Severity::must, diff.empty(), "KW-10", "... with the right values", "the pattern", diff);
    } else {
      ctx.check_as(Severity::should, false, "XAPI-22", "a type without __dlpack_c_exchange_api__ imports", "an array",
                   c.what());
    }
    c.value = py::none();
    obj = py::none();
    producer = py::none();
    gc_collect(ctx);
    if (made->deleter_calls() == 0) (void)made.release();
  });
}

DLPV_CASES {
  Declare("python.consumer.kw.any_object",
          "any object with __dlpack__ and __dlpack_device__ imports (no exchange API needed)")
      .must({"KW-10", "XAPI-22"}).python()
      .proven_by({"consumer_rejects_python_classes"})  // needs import_legacy and consumer_protocol: the body asks
      .run(any_object);
}

}  // namespace
}  // namespace dlpv::python
