// cases/python/request.cpp: python.request.*: __dlpack__ asked with keywords together, not one at a
// time. Six axes (max_version, copy, dl_device, stream, a writable or read-only source, the
// tensor's layout and size class) are covered pairwise: every pair of values of two axes is
// asked in at least one case; the four keywords three at a time: every triple of their values
// is asked too (100 cases, the least any cover can have: max_version x dl_device x stream). Each answer is judged by one oracle of the spec's rules:
//   stream    array API: "On CPU and other device types without streams, only None is
//             accepted" (STRM-04, should: the exception type is not specified);
//   dl_device a device the producer cannot serve -> BufferError (DEV-06); with copy=False the
//             array API: "raise a BufferError in case a copy is deemed necessary" (KW-04);
//   capsule   "dltensor" or "dltensor_versioned" (CAP-01); max_version=None -> legacy (VER-06,
//             should); a major-1 request -> versioned, stamped with the producer's own version
//             whatever was asked (VER-07, should; major 1: VER-01);
//   copy      True: never aliases (KW-03), IS_COPIED set (FLAG-05); False/None on a CPU array:
//             aliases (KW-04/KW-05); IS_COPIED exactly when copied (FLAG-05 must, FLAG-06 should);
//   source    a read-only source exported without a copy carries READ_ONLY (FLAG-02, should);
//   values    the tensor's own shape, strides and byte_offset read the array's values (LAYOUT-07);
//             its dtype is float32's (DTYPE-02) and its flags only defined bits (FLAG-01, should),
//             whatever the request;
//   deleter   an export lent without a copy (copy=False) or of a read-only source is cycled, fresh
//             arrays exported with the same request, through the leak loop (DEL-01): a deleter
//             that frees nothing on those paths alone shows nowhere else (python.input.producer.*
//             cycles the default request, producer.deleter.frees_copy.* the copies).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"
#include "support/helpers.hpp"

namespace dlpv::python {
namespace {

struct Shape {
  std::vector<int64_t> dims;
  const char* layout;
};

// scalar, empty and large (1 Mi elements) are catalogue shapes; the layouts are 3x4 arrays.
Shape shape_of(const std::string& tensor) {
  if (tensor == "strided" || tensor == "offset") return {kShape, tensor == "strided" ? "strided" : "offset"};
  return {shape_named(tensor == "contiguous" ? "3x4" : tensor), "contiguous"};
}

std::string version_text(const DLPackVersion& v) { return fmt::format("({}, {})", v.major, v.minor); }

// One request: the case's parameters, the array asked, and the keywords as a consumer would
// write them.
struct Request {
  std::string mv, copy, dev, stream, source, tensor;
  DLPackVersion own;
  Shape sh;
  bool read_only = false;
  DLDevice home{kDLCPU, 0}, other{kDLCUDA, 0};  ///< the array's device; one it is not on
  bool host_home = true;
  int stream_value = 0;
  py::object x;
  std::string an_array;
  py::dict kw;
  std::string asked;
  std::optional<uintptr_t> lib;  ///< the source array's own data address, when known
};

Request ask(CaseContext& ctx, PythonSubject& ps) {
  Request r;
  const auto& p = ctx.info().params;
  r.mv = p.at("max_version");
  r.copy = p.at("copy");
  r.dev = p.at("dl_device");
  r.stream = p.at("stream");
  r.source = p.at("source");
  r.tensor = p.at("tensor");
  r.own = ps.facts().producer_version;
  if (r.mv != "mv_none" && !ps.facts().producer_versioned)
    ctx.skip("the package exports no versioned capsule (probed at load: " + ps.facts().dlpack_signature_note +
             "); the max_version requests are for versioned producers");
  r.sh = shape_of(r.tensor);
  r.read_only = r.source == "read_only";
  // The array lives where the package's arrays live (probed at load): the CPU for most, a SYCL
  // device for dpnp. Its own device is "dev_same"; "dev_cuda" names one it is not on.
  r.home = ps.home_device();
  r.host_home = r.home.device_type == kDLCPU;
  const bool int_streams = r.home.device_type == kDLCUDA || r.home.device_type == kDLROCM;
  r.stream_value = r.stream == "stream_m1" ? -1 : r.stream == "stream_1" ? 1 : r.stream == "stream_2" ? 2 : 0;
  if (r.stream_value != 0 && !r.host_home && !int_streams)
    ctx.skip(fmt::format("not asked: the array lives on {}, and an integer stream is the CUDA and ROCm convention "
                         "(array API __dlpack__: for other devices a stream is an object the libraries agree on, "
                         "such as an in-order SYCL queue)", device_name(r.home)));
  r.x = ps.make(r.sh.dims, kF32, r.sh.layout, r.read_only, r.home);
  r.an_array = r.host_home ? "a CPU array" : "an array on " + device_name(r.home);
  // The request, as a consumer would write it.
  py::dict& kw = r.kw;
  if (r.mv == "mv_1_0") kw["max_version"] = py::make_tuple(1, 0);
  if (r.mv == "mv_own") kw["max_version"] = py::make_tuple(r.own.major, r.own.minor);
  if (r.mv == "mv_1_99") kw["max_version"] = py::make_tuple(1, 99);
  if (r.mv == "mv_2_0") kw["max_version"] = py::make_tuple(2, 0);
  if (r.copy == "copy_true") kw["copy"] = true;
  if (r.copy == "copy_false") kw["copy"] = false;
  if (r.copy == "copy_none") kw["copy"] = py::none();
  r.other = DLDevice{r.home.device_type == kDLCUDA ? kDLROCM : kDLCUDA, 0};
  if (r.dev == "dev_none") kw["dl_device"] = py::none();
  if (r.dev == "dev_same") kw["dl_device"] = py::make_tuple(static_cast<int>(r.home.device_type), r.home.device_id);
  if (r.dev == "dev_cuda") kw["dl_device"] = py::make_tuple(static_cast<int>(r.other.device_type), 0);
  if (r.stream == "stream_none") kw["stream"] = py::none();
  if (r.stream_value != 0) kw["stream"] = r.stream_value;
  r.lib = library_address(r.x);
  return r;
}

// The answers that end the case before the capsule is read: TypeError, a stream for a CPU array,
// a device the array is not on, a refusal. True when the verdict is complete.
bool judge_refusal(CaseContext& ctx, PythonSubject& ps, const Request& r, const Call& c) {
  const std::string &mv = r.mv, &copy = r.copy, &dev = r.dev, &asked = r.asked, &an_array = r.an_array;
  const int stream_value = r.stream_value;
  const bool host_home = r.host_home;
  const DLDevice home = r.home, other = r.other;
  const py::handle x = r.x;
  const py::dict& kw = r.kw;
  // TypeError answers "I do not take these keywords": a breach for a producer that speaks the
  // versioned protocol (the 2023.12 signature), and consumers read it as "legacy producer".
  if (c.is("TypeError") && !ps.facts().producer_versioned)
    ctx.skip("a legacy-only producer (probed at load) refuses these keywords with TypeError; "
             "python.kw.keywords_accepted judges that once (KW-01): " + c.what());
  if (c.is("TypeError")) {
    const bool about_version = mv == "mv_2_0" || mv == "mv_1_99";
    ctx.check_as(about_version ? Severity::should : Severity::must, false,
                 about_version ? "VER-09" : "KW-01",
                 fmt::format("well-formed keywords never raise TypeError; asked {}", asked), "no TypeError", c.what());
    return true;
  }
  // A stream for a CPU array (the target is the CPU unless dl_device names another device).
  if (stream_value != 0 && host_home && dev != "dev_cuda") {
    ctx.check_as(Severity::should, c.raised, "STRM-04",
                 fmt::format("stream={} for a CPU array is rejected (array API: \"On CPU and other device types "
                             "without streams, only None is accepted\"); asked {}", stream_value, asked),
                 "an exception", c.raised ? c.what() : "a capsule");
    // Refused: the right answer, and nothing more to judge. Served anyway: what was served
    // still answers the other keywords (a stream accepted hides no copy or flag finding).
    if (c.raised) return true;
  }
  // A device the array is not on and the producer may not serve.
  if (dev == "dev_cuda") {
    if (c.raised && stream_value != 0) {
      // Which of two questionable keywords a producer answers first is not specified: a
      // stream for a device it cannot serve may be refused for either reason.
      ctx.check(true, "DEV-06", fmt::format("a device it cannot serve, with a stream, is refused; asked {}", asked),
                "an exception", c.what());
      return true;
    }
    if (c.raised && copy == "copy_false" && c.is("ValueError")) {
      // KW-04: ValueError is the pre-2024.12 text's word for the same refusal: a warning.
      ctx.check_as(Severity::should, false, "KW-04",
                   fmt::format("copy=False with a device that needs a copy raises BufferError (ValueError was the "
                               "pre-2024.12 wording); asked {}", asked),
                   "BufferError", c.what());
      return true;
    }
    if (c.raised) {
      ctx.check(c.is("BufferError"), copy == "copy_false" ? "KW-04" : "DEV-06",
                fmt::format("a dl_device the producer cannot serve is refused with BufferError; asked {}", asked),
                "BufferError", c.what());
      return true;
    }
    ctx.check(copy != "copy_false", "KW-04",
              fmt::format("copy=False never copies: {} asked for on {} is refused; asked {}", an_array,
                          device_name(other), asked),
              "BufferError", "a capsule");
    // Served: the tensor must be where it was asked for (its memory is not read here).
    const DLTensor* served = capsule_tensor(c.value);
    if (!served) {
      ctx.check(false, "CAP-01", "__dlpack__ returns a 'dltensor' or 'dltensor_versioned' capsule", "a DLPack capsule",
                c.what());
      return true;
    }
    const DLDevice got = served->device;
    ctx.check(got.device_type == other.device_type && got.device_id == other.device_id, "DEV-06",
              fmt::format("a served dl_device request puts the tensor on that device, else BufferError; asked {}", asked),
              device_name(other), device_name(got));
    return true;
  }
  if (c.raised && copy == "copy_false" && c.is("BufferError") && !ps.never_lends().empty()) {
    // A package that never lends its storage deems a copy necessary for every export: "raise a
    // BufferError in case a copy is deemed necessary" is its lawful answer to copy=False.
    ctx.check(true, "KW-04", fmt::format("copy=False is refused with BufferError by a package that never lends its "
                                         "storage ({}); asked {}", ps.never_lends(), asked));
    return true;
  }
  if (c.raised) {
    // The array-API pseudo-code lets a producer that cannot give a legacy tensor raise
    // BufferError when max_version is None (VER-06: tolerated); a read-only source has no
    // legacy flag to carry its read-only state.
    if (mv == "mv_none" && c.is("BufferError")) {
      ctx.check_as(Severity::may, true, "VER-06",
                   fmt::format("a legacy request refused with BufferError (tolerated); asked {}", asked), "", c.what());
      return true;
    }
    bool copy_refused = copy == "copy_true" && dev != "dev_same";
    if (dev == "dev_same" && copy == "copy_true") {
      // Two keywords a producer may be refusing: one fact, one verdict. Asked again without
      // dl_device, a refusal of copy=True alone is KW-03's; else dl_device=(kDLCPU, 0) is DEV-05's.
      py::dict alone = kw.attr("copy")();
      alone.attr("pop")("dl_device");
      copy_refused = call_dlpack(x, alone).raised;
    }
    if (copy_refused)  // array API: "If True, the function must always copy"
      ctx.check(false, "KW-03", fmt::format("copy=True always copies; asked {}{}", asked,
                                            dev == "dev_same" ? " (copy=True without dl_device is refused too)" : ""),
                "a copied tensor", c.what());
    else if (dev == "dev_same" && host_home)  // the array's own device, the CPU: DEV-05 (export to kDLCPU)
      ctx.check(false, "DEV-05", fmt::format("dl_device=(kDLCPU, 0) for a CPU array is served; asked {}", asked),
                "a DLPack capsule", c.what());
    else if (dev == "dev_same")  // its own device needs no copy: "reuse the existing memory buffer if possible"
      ctx.check(false, "KW-05", fmt::format("dl_device naming the array's own device ({}) is served; asked {}",
                                            device_name(home), asked),
                "a DLPack capsule", c.what());
    else
      ctx.check(false, copy == "copy_false" ? "KW-04" : "KW-05",
                fmt::format("{} needs no copy, so it is exported (zero-copy); asked {}", an_array, asked),
                "a DLPack capsule", c.what());
    return true;
  }
  return false;
}

// A capsule came back: its name and version stamp, whether it aliases the source, its dtype and
// flags, and (on the CPU) the values it reads. False when it is no DLPack capsule.
bool judge_export(CaseContext& ctx, PythonSubject& ps, const Request& r, const Call& c) {
  const std::string &mv = r.mv, &copy = r.copy, &tensor = r.tensor, &source = r.source, &asked = r.asked,
                    &an_array = r.an_array;
  const bool host_home = r.host_home, read_only = r.read_only;
  const DLDevice home = r.home;
  const DLPackVersion own = r.own;
  const Shape& sh = r.sh;
  const auto& lib = r.lib;
  const std::string name = capsule_name(c.value);
  const bool versioned = name == kVersionedName;
  uint64_t flags = 0;
  const DLTensor* t = capsule_tensor(c.value, &flags);
  if (!ctx.check(t != nullptr, "CAP-01",
                 fmt::format("__dlpack__ returns a 'dltensor' or 'dltensor_versioned' capsule; asked {}", asked),
                 "a DLPack capsule", c.what()))
    return false;
  if (mv == "mv_none")
    ctx.check_as(Severity::should, !versioned, "VER-06", "max_version=None gives a legacy 'dltensor' capsule",
                 "'dltensor'", "'" + name + "'");
  else
    ctx.check_as(Severity::should, versioned, "VER-07",
                 fmt::format("max_version {} (major 1 or above) gives a versioned capsule", asked), "'dltensor_versioned'",
                 "'" + name + "'");
  if (versioned) {
    const auto* v = static_cast<const DLManagedTensorVersioned*>(capsule_pointer(c.value));
    ctx.check(v->version.major == 1, "VER-01", "a versioned tensor's major is 1", "1",
              std::to_string(v->version.major));
    ctx.check_as(Severity::should, v->version.major == own.major && v->version.minor == own.minor, "VER-07",
                 fmt::format("the version stamp is the producer's own whatever max_version asks; asked {}", asked),
                 version_text(own), version_text(v->version));
  }
  ctx.check(t->dtype.code == kF32.code && t->dtype.bits == kF32.bits && t->dtype.lanes == kF32.lanes, "DTYPE-02",
            fmt::format("dtype is the DLPack encoding of the array's float32 whatever the request; asked {}", asked),
            dtype_name(kF32), fmt::format("({}, {}, {})", t->dtype.code, t->dtype.bits, t->dtype.lanes));
  if (versioned) {
    const auto* v = static_cast<const DLManagedTensorVersioned*>(capsule_pointer(c.value));
    cases::check_defined_flags(ctx, v->version, flags, "asked " + asked);
  }
  const bool copied_flag = (flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0;
  const int64_t n = element_count(sh.dims);
  const uintptr_t a1 = reinterpret_cast<uintptr_t>(element0(*t));
  if (n > 0 && !lib)
    ctx.note(fmt::format("the source array's own data address is unknown (no __array_interface__, "
                         "__cuda_array_interface__ or data_ptr()), so whether the export aliases it "
                         "(KW-03/KW-04/KW-05) is not checked here; asked {}", asked));
  if (n > 0 && lib) {
    const bool aliases = a1 == *lib;
    if (copy == "copy_true")
      ctx.check(!aliases, "KW-03", fmt::format("copy=True never aliases the source; asked {}", asked),
                "a different data address",
                aliases ? fmt::format("the same address {:#x}", a1) : fmt::format("{:#x}, the source at {:#x}", a1, *lib));
    else if (copy == "copy_false" || ps.never_lends().empty())
      ctx.check(aliases, copy == "copy_false" ? "KW-04" : "KW-05",
                fmt::format("{} is exported without a copy; asked {}", an_array, asked),
                fmt::format("{:#x}", *lib), fmt::format("{:#x}", a1));
    // (copy=None of a package that never lends: "copy otherwise"; FLAG-05 below judges the copy.)
    if (versioned && !aliases)
      ctx.check(copied_flag, "FLAG-05", "a copy is flagged IS_COPIED", "bit 1 set", fmt::format("flags = {:#x}", flags));
    if (versioned && aliases)
      ctx.check_as(Severity::should, !copied_flag, "FLAG-06", "IS_COPIED is clear for a zero-copy export",
                   "bit 1 clear", fmt::format("flags = {:#x}", flags));
    if (versioned && read_only && aliases)
      ctx.check_as(Severity::should, (flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
                   fmt::format("a read-only source exported without a copy carries READ_ONLY; asked {}", asked),
                   "bit 0 set", fmt::format("flags = {:#x}", flags));
  } else if (versioned && copy == "copy_true" && n > 0) {  // a copy of nothing cannot be told
    ctx.check(copied_flag, "FLAG-05", "copy=True: the copy is flagged IS_COPIED", "bit 1 set",
              fmt::format("flags = {:#x}", flags));
  }
  if (!host_home) {  // device memory is not read here (python.device.* reads it through the library)
    ctx.note("the tensor's values are not read: its data is memory of " + device_name(home));
    return true;
  }
  const std::string diff = data_mismatch(*t, sh.dims, kF32);
  ctx.check_as(Severity::must, diff.empty(), "LAYOUT-07",
            fmt::format("the tensor's data, byte_offset, shape and strides read the array's values ({} {}); asked {}",
                        tensor, source, asked),
            "the reference pattern", diff);
  return true;
}

void request(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Request r = ask(ctx, ps);
    Call c = call_dlpack(r.x, r.kw);
    r.asked = py::str(r.kw).cast<std::string>();
    if (judge_refusal(ctx, ps, r, c) || !judge_export(ctx, ps, r, c)) return;
    // A lent export (copy=False) or one of a read-only source: its own path through the deleter,
    // cycled only when the export was right (a broken one, say a legacy struct in a versioned
    // capsule, is already judged, and cycling it would only crash on what was found).
    if (r.copy != "copy_false" && !(r.read_only && r.copy != "copy_true")) return;
    for (const Check& k : ctx.checks())
      if (k.status == Status::fail) return;
    c = Call();
    r.x = py::none();
    gc_collect(ctx);
    const std::string what = fmt::format("{} {} {}, asked {}", r.read_only ? "a read-only" : "a writable",
                                         r.tensor, r.host_home ? "CPU array" : "array on " + device_name(r.home),
                                         r.asked);
    leak_loop(ctx, ps, [&] { return ps.make(r.sh.dims, kF32, r.sh.layout, r.read_only, r.home); }, r.kw, false,
              element_count(r.sh.dims), element_bytes(kF32), what);
  });
}

DLPV_CASES {
  Declare("python.request", "__dlpack__ asked max_version, copy, dl_device and stream together answers by the spec")
      .must({"KW-05", "CAP-01", "KW-03", "KW-04", "FLAG-05", "VER-01", "DEV-05", "DEV-06", "LAYOUT-07", "STRM-04",
             "VER-06", "VER-07", "VER-09", "KW-01", "FLAG-02", "FLAG-06", "DTYPE-02", "FLAG-01", "DEL-01"})
      .python().also_needs(need::producer_protocol)
      .combine("max_version", {"mv_none", "mv_1_0", "mv_own", "mv_1_99", "mv_2_0"})
      .combine("copy", {"copy_none", "copy_true", "copy_false"})
      .combine("dl_device", {"dev_absent", "dev_none", "dev_same", "dev_cuda"})
      .combine("stream", {"stream_absent", "stream_none", "stream_m1", "stream_1", "stream_2"})
      .combine("source", {"writable", "read_only"})
      .combine("tensor", {"contiguous", "strided", "offset", "scalar", "empty", "large"})
      .triples({"max_version", "copy", "dl_device", "stream"})
      .proven_by({"combo_read_only_dropped", "combo_copy_forgotten", "minor_ahead_copy_forgotten", "version_echoes_request", "stream_accepted",
                  "dl_device_ignored", "device_and_stream_ignored", "legacy_struct_named_versioned", "copy_true_aliases",
                  "copy_false_copies", "default_copies", "none_gives_versioned", "copy_mislabels_dtype", "lent_export_leaks",
                  "export_undefined_flag"})
      .run(request);
}

}  // namespace
}  // namespace dlpv::python
