// cases/python/device.cpp: python.device.*: __dlpack_device__ matches the capsule (DEV-01,
// KW-11); dl_device=(1, 0) exports to host memory (DEV-05), a dl_device it cannot serve raises
// BufferError (DEV-06); an array on a second device of one type keeps its device id through
// __dlpack_device__, the export and the package's own import (DEV-01, DEV-07).
// SPDX-License-Identifier: Apache-2.0
#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void device_matches(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    // A package that exports nothing (found at load) still answers __dlpack_device__: LAYOUT-13
    // names BufferError for both methods of an array that cannot be exported. A refusal of
    // another type is a refusal all the same: a warning (the rule's exception, not a MUST).
    if (!ps.facts().refuses_exports.empty()) {
      py::object x = ps.make(kShape, kF32);
      Call d = attempt([&] { return x.attr("__dlpack_device__")(); });
      ctx.check(!d.is("TypeError"), "KW-11", "__dlpack_device__() takes no arguments besides self",
                "a result, or an exception other than TypeError", d.what());
      ctx.check_as(Severity::should, d.is("BufferError") || !d.raised, "LAYOUT-13",
                   "__dlpack_device__() of an array that cannot be exported (" + ps.facts().refuses_exports +
                       ") refuses with BufferError, as __dlpack__ does (\"__dlpack__/__dlpack_device__ raise "
                       "BufferError\")",
                   "BufferError, or the device", d.what());
      return;
    }
    if (!ps.info().has(need::producer_protocol)) {
      const auto why = ps.info().absent.find(need::producer_protocol);
      ctx.skip(why != ps.info().absent.end() ? why->second : "the subject has no DLPack producer protocol");
    }
    py::object x = ps.make(kShape, kF32);
    Call d = attempt([&] { return x.attr("__dlpack_device__")(); });
    // KW-11 is about the signature: only a TypeError (a missing argument) breaks it. Any other
    // exception is an answer to the call, judged by DEV-01 ("returns a pair"); BufferError is
    // how an array that cannot be exported refuses (LAYOUT-13: "__dlpack__/__dlpack_device__
    // raise BufferError"), and with __dlpack__ refusing too there is nothing to compare.
    ctx.check(!d.is("TypeError"), "KW-11", "__dlpack_device__() takes no arguments besides self",
              "a result, or an exception other than TypeError", d.what());
    if (d.raised) {
      if (d.is("TypeError")) return;
      const Call c = call_dlpack(x, newest_kwargs(ps));
      if (c.is("BufferError"))  // an array that cannot be exported: LAYOUT-13 names the exception for both
        ctx.check_as(Severity::should, d.is("BufferError"), "LAYOUT-13",
                     "__dlpack_device__() of an array whose __dlpack__ refuses it with BufferError raises BufferError "
                     "too (\"__dlpack__/__dlpack_device__ raise BufferError\")",
                     "BufferError", d.what());
      else
        ctx.check(false, "DEV-01", "__dlpack_device__() returns a pair (device_type, device_id)",
                  "(device_type, device_id)", d.what() + "; __dlpack__ " + c.what());
      return;
    }
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

// A second device of one type (a second GPU, a second SYCL root device): where the package's
// arrays can live on two devices of one type, an array made on the second (not the one the
// package picks by default) is described as that device by __dlpack_device__ and by its export
// (DEV-01: "matches dl_tensor.device"), and the package's own from_dlpack puts the result there
// (DEV-07: "an array on the device x lives on"): a device id lost on the way (taken from the
// current device, or left 0) shows only here. Where the adapter declares one device of each type,
// nothing here can be observed: a skip that says what it would need.
void second_of_type(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    std::optional<DLDevice> second;
    for (const DLDevice& d : ps.devices()) {
      if (second) break;
      for (const DLDevice& e : ps.devices())
        if (e.device_type == d.device_type && e.device_id != d.device_id) {
          second = e;  // the later of the first two devices of one type the adapter lists
          break;
        }
    }
    if (!second) {
      std::string list;
      for (const DLDevice& d : ps.devices()) list += (list.empty() ? "" : ", ") + device_name(d);
      ctx.skip("the package's arrays live on one device of each type here (" + list +
               "): this case needs two devices of one type, such as two GPUs, and is not run");
    }
    const DLDevice d = *second;
    const std::string where = device_name(d);
    ctx.phase("make");
    py::object x = ps.make(kShape, kF32, "contiguous", false, d);
    ctx.phase("export");
    const std::optional<std::pair<int, int>> said = device_of(x);
    const std::string want = fmt::format("({}, {})", static_cast<int>(d.device_type), d.device_id);
    ctx.check(said && said->first == static_cast<int>(d.device_type) && said->second == d.device_id, "DEV-01",
              "__dlpack_device__() of an array made on " + where + " names that device", want,
              said ? fmt::format("({}, {})", said->first, said->second) : std::string("no (device_type, device_id) pair"));
    Call c = call_dlpack(x, newest_kwargs(ps));
    if (c.raised) refused_export(ctx, "__dlpack__ of an array on " + where, c.what());
    const DLTensor* t = capsule_tensor(c.value);
    if (!ctx.check(t != nullptr, "CAP-01", "__dlpack__ returns a DLPack capsule", "a DLPack capsule", c.what())) return;
    ctx.check(t->device.device_type == d.device_type && t->device.device_id == d.device_id, "DEV-01",
              "the export of an array on " + where + " names that device", want,
              fmt::format("({}, {})", static_cast<int>(t->device.device_type), t->device.device_id));
    c = Call();
    if (!ps.facts().consumer) return;  // a producer-only package: the export is all there is to judge
    ctx.phase("import");
    Call r = attempt([&] { return ps.from_dlpack(x); });
    if (r.raised) {  // its own array, on a device it made it on: nothing it cannot use
      ctx.check(false, "DEV-07", "the package's from_dlpack of its own array on " + where + " returns an array on "
                "that device", want, r.what());
      return;
    }
    const std::optional<std::pair<int, int>> got = device_of(r.value);
    ctx.check(got && got->first == static_cast<int>(d.device_type) && got->second == d.device_id, "DEV-07",
              "the package's from_dlpack of an array on " + where + " returns an array on that device", want,
              got ? fmt::format("({}, {})", got->first, got->second) : std::string("no (device_type, device_id) pair"));
  });
}

DLPV_CASES {
  Declare("python.device.matches_capsule", "__dlpack_device__() is a 2-tuple equal to the capsule's device")
      .must({"DEV-01", "KW-11", "LAYOUT-13"}).python()  // needs producer_protocol: the body asks
      .proven_by({"device_id_wrong"})
      .run(device_matches);
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

DLPV_CASES {
  Declare("python.device.dl_device_cpu", "dl_device=(1, 0) exports to host memory")
      .must({"DEV-05"}).python()
      .needs({need::export_versioned}).proven_by({"no_dl_device_kw"})
      .run(dl_device_cpu);
}

void dl_device_unserveable(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32);
    for (auto dev : {std::pair<int, int>{7, 0}, {2, 999}}) {
      // The rule does not depend on the struct kind: a producer that gives legacy capsules is
      // asked too, with the keywords it takes (max_version only where it speaks it).
      py::dict kw = newest_kwargs(ps);
      kw["dl_device"] = py::make_tuple(dev.first, dev.second);
      Call c = call_dlpack(x, kw);
      const std::string what = fmt::format("dl_device=({}, {})", dev.first, dev.second);
      if (c.is("TypeError") && !ps.facts().producer_versioned)
        ctx.skip("a legacy-only producer (probed at load) takes no dl_device keyword (python.kw.keywords_accepted "
                 "judges KW-01): " + c.what());
      // The array API (__dlpack__, dl_device): "If the device type cannot be handled by the
      // producer, this function must raise BufferError."
      if (!ctx.check(c.raised, "DEV-06", what + " that the producer cannot serve is refused", "BufferError", c.what()))
        continue;
      ctx.check(c.is("BufferError"), "DEV-06", what + " that the producer cannot serve must raise BufferError",
                "BufferError", c.text);
    }
  });
}

DLPV_CASES {
  Declare("python.device.dl_device_unserveable", "a dl_device the producer cannot serve raises BufferError")
      .must({"DEV-06"}).python().also_needs(need::producer_protocol)
      .proven_by({"dl_device_ignored"})
      .run(dl_device_unserveable);
}

DLPV_CASES {
  Declare("python.device.second_of_type",
          "an array on a second device of one type keeps its device through export and import")
      .must({"DEV-01", "DEV-07", "CAP-01"}).python().also_needs(need::producer_protocol)
      .proven_by({"second_device_exported_as_first", "import_lands_on_first_device"})
      .run(second_of_type);
}

}  // namespace
}  // namespace dlpv::python
