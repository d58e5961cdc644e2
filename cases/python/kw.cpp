// cases/python/kw.cpp: python.kw.*: __dlpack__'s keywords: well-formed max_version never raises
// TypeError (VER-09), the 2023.12 keywords are accepted (KW-01), malformed ones raise (ERR-02,
// KW-02), copy=True/False/None (KW-03/04/05/09, FLAG-05/06).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

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

DLPV_CASES {
  Declare("python.kw.max_version.type_error_free", "well-formed max_version tuples never raise TypeError")
      .should({"VER-09"}).python()
      .needs({need::export_versioned}).proven_by({"major2_type_error"})
      .run(type_error_free);
}

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
      // A plain float32 array asked with a keyword it takes: a capsule, or a refusal that is a
      // BufferError (the array API, __dlpack__ Raises: "BufferError: when the data cannot be
      // exported as DLPack"); another exception type is ERR-01's warning.
      if (c.raised && !c.is("TypeError"))
        ctx.check_as(Severity::should, c.buffer_error, "ERR-01",
                     fmt::format("__dlpack__({}=...) of a plain float32 3x4 array answers with a capsule or "
                                 "BufferError", key),
                     "a capsule, or BufferError", c.what());
    }
  });
}

DLPV_CASES {
  Declare("python.kw.keywords_accepted", "__dlpack__ accepts stream, max_version, dl_device and copy (2023.12)")
      .should({"KW-01", "ERR-01"}).python().also_needs(need::producer_protocol)
      .proven_by({"no_dl_device_kw"})
      .run(keywords_accepted);
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

DLPV_CASES {
  Declare("python.kw.invalid_arguments", "malformed stream/max_version values raise an exception")
      .should({"ERR-02", "KW-02"}).python().also_needs(need::producer_protocol)
      .proven_by({"accepts_bad_args"})
      .run(invalid_arguments);
}

void copy_true(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // KW-03 does not depend on the struct kind: a legacy-only producer that takes copy= is
    // asked too (without max_version), and only the versioned flag check needs DLPack 1.x.
    const bool versioned = ps.facts().producer_versioned;
    py::object x = ps.make(kShape, kF32);
    Call plain = call_dlpack(x, newest_kwargs(ps));
    py::dict kw = newest_kwargs(ps);
    kw["copy"] = true;
    Call c = call_dlpack(x, kw);
    if (c.raised && (versioned || !c.is("BufferError"))) {
      // The array API (__dlpack__, copy): "If True, the function must always copy": a refusal
      // is a breach, not a choice (a CPU array can always be copied on the CPU).
      ctx.check(false, "KW-03", "copy=True always copies (a refusal breaks \"must always copy\")", "a copied tensor",
                c.what());
      return;
    }
    if (c.raised) {
      // A legacy request (no max_version) may be refused outright: "from March 2025 onwards
      // (...) it's okay to raise BufferError here" (the array API's __dlpack__ pseudo-code).
      ctx.check(true, "KW-03", "a legacy request with copy=True is refused with BufferError (allowed for max_version=None)",
                "a copy or a BufferError", c.what());
      return;
    }
    uint64_t flags = 0;
    auto a0 = capsule_address(plain.value);
    auto a1 = capsule_address(c.value, &flags);
    if (!a0 || !a1) ctx.harness_error("copy=True / default export: " + c.what() + " / " + plain.what());
    ctx.check(*a0 != *a1, "KW-03", "copy=True never aliases the source", "a different data address",
              // What was seen, whichever way the check goes (a pass reports its observation too).
              *a0 == *a1 ? fmt::format("the same address {:#x}", *a1)
                         : fmt::format("{:#x}, the source at {:#x}", *a1, *a0));
    if (versioned)
      ctx.check((flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05", "a copy is flagged IS_COPIED",
                "bit 1 set", fmt::format("flags = {:#x}", flags));
    const DLTensor* tp = capsule_tensor(c.value);
    if (!tp) ctx.harness_error("copy=True export: " + c.what());
    const DLTensor& t = *tp;
    const std::string diff = data_mismatch(t, kShape, kF32);
    ctx.check_as(Severity::must, diff.empty(), "KW-03", "the copy holds the source's values", "the reference pattern", diff);
  });
}

DLPV_CASES {
  Declare("python.kw.copy_true", "copy=True copies and sets IS_COPIED")
      .must({"KW-03", "FLAG-05"}).python()
      .needs({need::copy_keyword}).proven_by({"copy_true_aliases"})
      .run(copy_true);
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
    // A package that never lends its storage (probed at load) deems a copy necessary for every
    // export: "raise a BufferError in case a copy is deemed necessary" is its lawful answer.
    if (!a1 && !ps.never_lends().empty() && c.is("BufferError")) {
      ctx.check(true, "KW-04", "copy=False is refused with BufferError by a package that never lends its storage (" +
                                   ps.never_lends() + ")");
      return;
    }
    ctx.check(a1.has_value(), "KW-04", "copy=False on a CPU array exports it (no copy is needed)",
              "a 'dltensor_versioned' capsule", c.what());
    if (!a1 || !a0) return;
    ctx.check(*a0 == *a1, "KW-04", "copy=False never copies: the tensor aliases the array",
              fmt::format("{:#x}", *a0), fmt::format("{:#x}", *a1));
    ctx.check((flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "FLAG-06", "IS_COPIED is clear without a copy",
              "bit 1 clear", fmt::format("flags = {:#x}", flags));
  });
}

DLPV_CASES {
  Declare("python.kw.copy_false", "copy=False on a CPU array is zero-copy, IS_COPIED clear")
      .must({"KW-04", "FLAG-06"}).python()
      .needs({need::export_versioned}).proven_by({"copy_false_copies"})
      .run(copy_false);
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

DLPV_CASES {
  Declare("python.kw.copy_false.needs_copy",
          "copy=False where only a copy could serve (dl_device=CPU for device memory) raises BufferError")
      .must({"KW-04"}).python()
      .needs({need::export_versioned}).proven_by({"copy_false_copies_across_devices"})
      .run(copy_false_needs_copy);
}

void copy_none_zero_copy(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    py::dict kw = newest_kwargs(ps);
    auto lib = library_address(x);
    Call a = call_dlpack(x, kw), b = call_dlpack(x, kw);
    if (a.raised) refused_export(ctx, "__dlpack__", a.what());
    uint64_t flags = 0;
    auto pa = capsule_address(a.value, &flags), pb = capsule_address(b.value);
    if (!pa || !pb) ctx.harness_error("__dlpack__ did not give DLPack capsules: " + a.what());
    // The array API (__dlpack__, copy): None "must reuse the existing memory buffer if possible
    // and copy otherwise". A package that never lends its storage (probed at load: it refuses
    // copy=False, and its default export is a flagged copy) is judged by "copy otherwise".
    if (!ps.never_lends().empty() && (!lib || *pa != *lib)) {
      const bool versioned = capsule_name(a.value) == kVersionedName;
      ctx.check(!versioned || (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "KW-05",
                "a package that never lends its storage exports a copy, flagged IS_COPIED (" + ps.never_lends() + ")",
                "bit 1 set", fmt::format("flags = {:#x}", flags));
      return;
    }
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

DLPV_CASES {
  Declare("python.kw.copy_none.zero_copy", "the default export aliases the array's own memory")
      .must({"KW-05", "KW-09", "FLAG-06"}).python().also_needs(need::producer_protocol)
      .proven_by({"default_copies"})
      .run(copy_none_zero_copy);
}

}  // namespace
}  // namespace dlpv::python
