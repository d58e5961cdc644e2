// cases/python/pair/device.cpp: python.pair.device.*: one package's array handed to another
// package's from_dlpack when the two live on different devices (NumPy on the CPU, dpnp on a
// SYCL device, CuPy on a GPU): for every ordered pair of Python subjects whose home devices
// differ, and a package with itself when its adapter declares a second device. The consumer gets the producer's array behind a recorder (recorder.py, beside
// this file, built in as text) that keeps every __dlpack__ call, so that each outcome is charged to the side whose behaviour it is:
// a producer that cannot serve dl_device=(kDLCPU, 0) (DEV-05), a consumer that answers a device
// it cannot use with the wrong exception (DEV-04, DEV-08) or puts the result on the wrong device
// (DEV-07, DEV-08).
// SPDX-License-Identifier: Apache-2.0
#include <optional>
#include <fmt/format.h>
#include <pybind11/eval.h>

#include <dlpack_validate/tensor.hpp>

#include "../support/py_consumer.hpp"
#include "../support/py_helpers.hpp"

namespace dlpv::python {
namespace {

const std::vector<int64_t> kShape{3, 4};

std::string pair_text(DLDevice d) { return fmt::format("({}, {})", static_cast<int>(d.device_type), d.device_id); }

struct CrossPair {
  PythonSubject* producer = nullptr;
  PythonSubject* consumer = nullptr;
  DLDevice from{};  ///< where the producer's arrays live (its home device)
  DLDevice to{};    ///< where the consumer's arrays live
  py::object made;  ///< the producer's float32 3x4 array
  py::object recorded;  ///< recorder.py's Recorded(made)
};

// recorder.py's capsule_facts: (name, (device_type, device_id), flags or None, elements or None)
// of an unconsumed DLPack capsule, None for anything else. The elements (bytes, C order) only
// for a tensor on (kDLCPU, 0) of at most 8 dimensions whose elements are whole single-lane bytes,
// read by the harness's reader (gather_elements: nothing of the library's is trusted).
py::object capsule_facts(py::handle cap) {
  const std::string name = capsule_name(cap);
  if (name != kLegacyName && name != kVersionedName) return py::none();
  void* p = capsule_pointer(cap);
  if (!p) return py::none();
  const bool versioned = name == kVersionedName;
  DLManagedTensorVersioned head{};
  DLTensor t{};
  if (versioned ? !safe_read(p, &head, sizeof head) : !safe_read(p, &t, sizeof t)) return py::none();
  if (versioned) t = head.dl_tensor;
  const int device_type = static_cast<int>(t.device.device_type);
  py::object flags = versioned ? py::object(py::int_(head.flags)) : py::object(py::none());
  py::object elements = py::none();
  if (device_type == kDLCPU && t.device.device_id == 0 && t.ndim >= 0 && t.ndim <= 8 && t.dtype.bits % 8 == 0 &&
      t.dtype.lanes == 1) {
    std::vector<uint8_t> bytes;
    std::string why;
    if (gather_elements(versioned ? static_cast<DLManagedTensorVersioned*>(p)->dl_tensor
                                  : static_cast<DLManagedTensor*>(p)->dl_tensor,
                        bytes, why))
      elements = py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return py::make_tuple(name, py::make_tuple(device_type, t.device.device_id), flags, elements);
}

// recorder.py's Recorded: its text (built in, recorder_py.inc) run once per worker into a module
// of its own, with capsule_facts above in its namespace. (Kept for the worker's life, never
// destroyed: a Python object must not outlive the interpreter in a C++ static's destructor.)
py::object recorder() {
  static py::object* recorded = nullptr;
  if (!recorded) {
    static const char* const source =
#include "recorder_py.inc"
        ;
    py::object module = py::module_::import("types").attr("ModuleType")("dlpack_validate_recorder");
    py::object ns = module.attr("__dict__");
    ns["capsule_facts"] = py::cpp_function(&capsule_facts);
    py::exec(source, ns);
    recorded = new py::object(ns["Recorded"]);
  }
  return *recorded;
}

// The pair, or a skip that says why it is not a cross-device pair.
CrossPair cross_pair(CaseContext& ctx, PythonSubject& producer) {
  CrossPair p;
  p.producer = &producer;
  p.consumer = dynamic_cast<PythonSubject*>(&ctx.peer());
  if (!p.consumer) ctx.skip("the consumer is not a Python package");
  p.to = p.consumer->home_device();
  // The producer's home device, or when that is the consumer's too, another device the
  // producer's adapter declares (a package with two devices is a cross-device pair with itself).
  auto same = [](DLDevice a, DLDevice b) { return a.device_type == b.device_type && a.device_id == b.device_id; };
  p.from = producer.home_device();
  if (same(p.from, p.to)) {
    for (const DLDevice& d : producer.devices())
      if (!same(d, p.to)) {
        p.from = d;
        break;
      }
  }
  if (same(p.from, p.to))
    ctx.skip(fmt::format("the producer's arrays live on {} only, as the consumer's: not a cross-device pair "
                         "(pair.* covers it)",
                         device_name(p.from)));
  const SubjectInfo& ci = p.consumer->info();
  if (!ci.has(need::import_legacy) && !ci.has(need::import_versioned)) {
    const auto why = ci.absent.find(need::import_legacy);
    ctx.skip("the consumer package imports nothing: " +
             (why != ci.absent.end() && !why->second.empty() ? why->second : std::string("it has no from_dlpack")));
  }
  ctx.phase("make");
  p.made = producer.make(kShape, kF32, "contiguous", false, p.from);
  p.recorded = recorder()(p.made);
  return p;
}

std::string record_text(const CrossPair& p) { return py::repr(p.recorded.attr("calls")).cast<std::string>(); }

// The producer's answers to __dlpack__ calls that asked for `dl_device`: (raised text or "",
// served device) for the first such call; nullopt when none asked for it.
struct Served {
  bool raised = false;
  std::string error;
  bool stream = false;  ///< the call carried a stream (not None)
  std::optional<DLDevice> device;
  uint64_t flags = 0;
  bool versioned = false;
  bool withheld = false;  ///< its device type is none DLPack defines: not handed to the consumer
  std::optional<std::vector<uint8_t>> elements;  ///< a host tensor's elements, read at handover
};
std::optional<Served> served_for(const CrossPair& p, std::optional<DLDevice> asked) {
  for (py::handle c : py::list(p.recorded.attr("calls"))) {
    py::tuple call = py::reinterpret_borrow<py::tuple>(c);
    if (call[0].cast<std::string>() != "__dlpack__") continue;
    py::dict kw = py::reinterpret_borrow<py::dict>(call[1]);
    py::object dl = kw.contains("dl_device") ? py::object(kw["dl_device"]) : py::object(py::none());
    if (asked) {
      if (dl.is_none()) continue;
      try {
        auto d = dl.cast<std::pair<int, int>>();
        if (d.first != static_cast<int>(asked->device_type) || d.second != asked->device_id) continue;
      } catch (py::cast_error&) {
        continue;
      }
    } else if (!dl.is_none()) {
      continue;
    }
    Served s;
    s.stream = kw.contains("stream") && !py::object(kw["stream"]).is_none();
    py::tuple out = py::reinterpret_borrow<py::tuple>(call[2]);
    const std::string kind = out[0].cast<std::string>();
    if (kind == "raised") {
      s.raised = true;
      s.error = out[1].cast<std::string>();
    } else if (kind == "capsule" || kind == "withheld") {
      s.withheld = kind == "withheld";
      s.versioned = out[1].cast<std::string>() == "dltensor_versioned";
      auto d = out[2].cast<std::pair<int, int>>();
      s.device = DLDevice{static_cast<DLDeviceType>(d.first), d.second};
      if (!out[3].is_none()) s.flags = out[3].cast<uint64_t>();
      if (!out[4].is_none()) {
        const std::string b = out[4].cast<std::string>();
        s.elements = std::vector<uint8_t>(b.begin(), b.end());
      }
    }
    return s;
  }
  return std::nullopt;
}

const std::vector<uint8_t>& pattern() {
  static const std::vector<uint8_t> want = expected_bytes(kF32, kShape, DLPV_LAYOUT_CONTIGUOUS);
  return want;
}

// The consumer's array against `want`: "" when equal, else the difference.
// A capsule the recorder withheld (its tensor names device type 0, 5, 6, a negative one or one past
// 255, a struct that is no tensor): the
// producer's finding (DEV-02), and nothing of the consumer is judged. True when it stopped.
bool withheld_capsule(CaseContext& ctx, const CrossPair& p) {
  for (py::handle c : py::list(p.recorded.attr("calls"))) {
    py::tuple call = py::reinterpret_borrow<py::tuple>(c);
    py::tuple out = py::reinterpret_borrow<py::tuple>(call[2]);
    if (out[0].cast<std::string>() != "withheld") continue;
    const auto d = out[2].cast<std::pair<long long, long long>>();
    ctx.charge("producer");
    ctx.check(false, "DEV-02",
              "the producer's capsule holds a tensor on a device type DLPack defines (one that does not was not "
              "handed to the consumer)",
              "a defined DLDeviceType", fmt::format("device type {} in a '{}' capsule", d.first,
                                                     out[1].cast<std::string>()));
    return true;
  }
  return false;
}

// The imported array's elements against `want` ("" when equal); nullopt when the consumer's
// adapter says it cannot read such an array back (NotImplementedError: a limit of the adapter,
// say an array on a device it cannot reach, which is no finding about either library).
std::optional<std::string> values_of(CaseContext& ctx, PythonSubject& consumer, py::handle array,
                                     const std::vector<uint8_t>& want = pattern()) {
  try {
    std::string got = py::bytes(consumer.adapter().attr("to_bytes")(array)).cast<std::string>();
    const std::vector<uint8_t> g(got.begin(), got.end());
    return describe_mismatch(kF32, want, g);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_NotImplementedError)) {
      ctx.note("the elements are not judged: the consumer's adapter cannot read the imported array back here (" +
               describe(e) + ")");
      return std::nullopt;
    }
    return "to_bytes raised " + describe(e);
  }
}

// consumer.from_dlpack(recorder, **kw). A consumer that refuses the recorder without calling it
// (it takes only its own or extension types) is asked again with the bare array: judged on
// the outcome, without a record. Neither side is charged for a death inside the call.
Call import_through(CaseContext& ctx, CrossPair& p, py::dict kw = py::dict()) {
  ctx.charge("");
  ctx.phase("import");
  Call r = attempt([&] { return p.consumer->from_dlpack(p.recorded, kw); });
  if (r.raised && py::len(p.recorded.attr("calls")) == 0) {
    ctx.note("the consumer refused the recording stand-in without calling it (" + r.text +
             "): asked again with the producer's array itself, whose calls are not recorded");
    p.recorded = recorder()(py::none());
    r = attempt([&] { return p.consumer->from_dlpack(p.made, kw); });
  }
  return r;
}

// from_dlpack(x) with no device: the result stays on x's device (DEV-07), or the consumer,
// which cannot use that device, refuses with BufferError (DEV-04: "raises BufferError for a
// device it cannot use").
void pair_default(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    CrossPair p = cross_pair(ctx, ps);
    Call r = import_through(ctx, p);
    if (withheld_capsule(ctx, p)) return;
    const std::optional<Served> own = served_for(p, std::nullopt);
    if (own && own->raised)
      ctx.skip(own->stream ? fmt::format("the consumer passed a stream with its request and the producer refused it "
                                         "({}): the stream cases judge both",
                                         own->error)
                           : fmt::format("the producer's own export (no dl_device) raised {}: its producer cases "
                                         "judge that",
                                         own->error));
    ctx.charge("consumer");
    if (r.raised) {
      ctx.check_as(Severity::should, r.is("BufferError"), "DEV-04",
                fmt::format("a consumer whose arrays live on {} and that cannot use {} array refuses it with "
                            "BufferError",
                            device_name(p.to), with_article(device_name(p.from))),
                "BufferError", r.text + " (calls: " + record_text(p) + ")");
      return;
    }
    const auto got = device_of(r.value);
    if (!got) ctx.skip("the imported array has no __dlpack_device__ to say where it lives");
    const DLDevice d{static_cast<DLDeviceType>(got->first), got->second};
    // Judged against the tensor the producer really served (a producer whose export lands
    // elsewhere than its __dlpack_device__ says is judged by DEV-01 in its own cases).
    DLDevice want = p.from;
    if (own && own->device) {
      if (own->device->device_type != p.from.device_type || own->device->device_id != p.from.device_id)
        ctx.note(fmt::format("the producer served a tensor on {} for an array on {}: the consumer is judged against "
                             "the tensor it was given",
                             device_name(*own->device), device_name(p.from)));
      want = *own->device;
    }
    ctx.check(d.device_type == want.device_type && d.device_id == want.device_id, "DEV-07",
              "from_dlpack(x) with device=None returns an array on the device of the tensor x exports",
              pair_text(want), pair_text(d));
    ctx.charge("");
    ctx.phase("read");
    const std::optional<std::string> diff = values_of(ctx, *p.consumer, r.value);
    // The producer's tensor lives on its device, out of the validator's reach: a difference is
    // the pair's, not one side's alone.
    if (diff)
      ctx.check(diff->empty(), "LAYOUT-01", "the imported array holds the producer's elements", "the reference pattern",
                *diff);
  });
}

// from_dlpack(x, device=cpu) of an array on another device: "from_dlpack(x, device=<cpu>)
// yields CPU-accessible data (copy when needed); a library that cannot do this at all raises
// BufferError" (DEV-08). The consumer asks the producer for dl_device=(kDLCPU, 0) or copies
// itself; a producer asked for it must serve it ("the producer can export to dl_device=(kDLCPU,
// 0)", DEV-05), and what it serves is judged here first, so that a consumer is never charged
// for its producer.
void pair_to_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    CrossPair p = cross_pair(ctx, ps);
    if (p.from.device_type == kDLCPU)
      ctx.skip("the producer's arrays already live on the CPU: device=cpu asks for nothing across devices");
    py::object a = p.consumer->adapter();
    py::object cpu = py::hasattr(a, "cpu_device") ? a.attr("cpu_device")() : py::str("cpu");
    py::dict kw;
    kw["device"] = cpu;
    Call r = import_through(ctx, p, kw);
    if (withheld_capsule(ctx, p)) return;
    const DLDevice host{kDLCPU, 0};
    const std::optional<Served> s = served_for(p, host);
    if (s && s->raised && s->stream)
      ctx.skip(fmt::format("the consumer passed a stream with dl_device=(1, 0) and the producer refused it ({}): the "
                           "stream cases judge both (STRM-09)",
                           s->error));
    if (s) {
      ctx.charge("producer");
      if (s->raised) {
        ctx.check(false, "DEV-05", "asked for dl_device=(1, 0) (no copy= given), the producer serves a host tensor",
                  "a capsule on (1, 0)", s->error);
        return;
      }
      if (s->device) {
        if (!ctx.check(s->device->device_type == kDLCPU && s->device->device_id == 0, "DEV-05",
                       "asked for dl_device=(1, 0), the producer serves a tensor on (1, 0)", "(1, 0)",
                       pair_text(*s->device)))
          return;
        if (s->versioned)
          ctx.check((s->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "DEV-05",
                    fmt::format("the host tensor served for {} array is a copy, flagged IS_COPIED",
                                with_article(device_name(p.from))),
                    "IS_COPIED set", fmt::format("flags {:#x}", s->flags));
        if (s->elements && !ctx.check(*s->elements == pattern(), "DEV-05",
                                      "the host tensor served holds the array's elements (read before the consumer "
                                      "took it)",
                                      "the reference pattern", describe_mismatch(kF32, pattern(), *s->elements)))
          return;
      }
    }
    ctx.charge("consumer");
    if (r.raised) {
      if (r.is("TypeError") && !served_for(p, host) && r.text.find("device") != std::string::npos &&
          r.text.find("keyword") != std::string::npos)
        ctx.skip("from_dlpack does not accept device= (" + r.text + "): a pre-2023.12 from_dlpack(x, /) signature");
      ctx.check(r.is("BufferError"), "DEV-08",
                fmt::format("a consumer that cannot bring {} array to the CPU refuses with BufferError",
                            with_article(device_name(p.from))),
                "BufferError", r.text + " (calls: " + record_text(p) + ")");
      return;
    }
    if (const auto d = device_of(r.value))
      ctx.check(d->first == kDLCPU, "DEV-08", "from_dlpack(x, device=cpu) returns an array on the CPU", "(1, 0)",
                fmt::format("({}, {})", d->first, d->second));
    ctx.charge("");
    ctx.phase("read");
    const std::optional<std::string> diff = values_of(ctx, *p.consumer, r.value);
    // Judged on the consumer when the host tensor it was served was read and right, or when it
    // was served none (its own device-to-host copy); else the pair's.
    if ((s && s->elements) || !s) ctx.charge("consumer");
    if (diff)
      ctx.check(diff->empty(), "DEV-08",
                fmt::format("from_dlpack(x, device=cpu) of {} array holds its elements in host memory",
                            with_article(device_name(p.from))),
                "the reference pattern", *diff + " (calls: " + record_text(p) + ")");
  });
}

DLPV_CASES {
  Declare("python.pair.device.default", "an array of another device handed to from_dlpack(x): imported on x's "
          "device or refused with BufferError")
      .python().role(Role::pair)
      .must({"DEV-07", "LAYOUT-01", "DEV-04", "DEV-02"})
      .proven_by({"consumer_ext_as_cpu", "consumer_result_flags"})
      .run(pair_default);
  Declare("python.pair.device.to_cpu", "from_dlpack(x, device=cpu) of another device's array: its elements on the "
          "host, or BufferError")
      .python().role(Role::pair)
      .must({"DEV-08", "DEV-05", "DEV-02"})
      .proven_by({"consumer_device_cpu_ignored", "dl_device_cpu_refused"})
      .run(pair_to_cpu);
}

}  // namespace
}  // namespace dlpv::python
