// cases/python/consumer/device.cpp: python.consumer.device.*: devices: an unusable device is
// refused with BufferError (DEV-04), the import stays on the producer's device (DEV-07),
// device=cpu brings a CUDA array's values to the host (DEV-08), __dlpack_device__ is asked
// before a stream is passed (DEV-09).
// SPDX-License-Identifier: Apache-2.0
#include <cstring>
#include <optional>
#include <utility>

#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

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

DLPV_CASES {
  Declare("python.consumer.device.foreign", "a kDLVulkan tensor is refused with BufferError and deleted once")
      .should({"DEV-04", "DEL-08"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_deletes_on_refusal"})
      .run(device_foreign);
}

// DEV-04 on every device type a consumer may meet: a CPU build of torch 2.13 refuses a kDLCUDA
// tensor with AssertionError and a kDLOpenCL one with RuntimeError, imports a kDLMetal one,
// and gives BufferError only for some types (kDLVulkan among them), so one device type
// proves little. Device types the package declares (its adapter's devices) are not unusable
// to it and skip; host-accessible types (kDLCUDAHost, kDLCUDAManaged, kDLROCMHost) are not in
// the family: a CPU consumer may read them.
struct UnusableDevice {
  const char* name;
  int32_t type;
};
// (kDLOneAPI = 14 and kDLWebGPU = 15 are from DLPack 0.8 and 1.0: numbers here, since the
// Debian header is 0.6; 999 is no device type at all.)
constexpr UnusableDevice kUnusable[] = {{"cuda", kDLCUDA}, {"opencl", kDLOpenCL}, {"metal", kDLMetal},
                                        {"rocm", kDLROCM}, {"oneapi", 14},        {"webgpu", 15},
                                        {"undefined", 999}};

void device_unusable(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const std::string& which = ctx.info().params.at("target");
    int32_t type = 0;
    for (const auto& u : kUnusable)
      if (which == u.name) type = u.type;
    for (const DLDevice& d : ps.devices())
      if (d.device_type == type)
        ctx.skip(fmt::format("the package's adapter declares {} as one of its devices: not a device it cannot use",
                             device_name(d)));
    const DLDevice dev{static_cast<DLDeviceType>(type), 0};
    const MadeSpec spec = labelled_spec(dev);
    Feed f = feed(ctx, ps, spec, speaks_versioned(ps));
    const std::string label = device_name(dev);
    // Real device memory (a CUDA device on this machine) that the consumer imports and reads
    // back right: it can use the device after all (JAX on a GPU machine, whose adapter declares
    // only the CPU). Under a label alone (no such device here) an import proves nothing.
    if (!f.result.raised && spec.device_memory && values_differ(ps, f.result.value, *f.made).empty()) {
      ctx.check(true, "DEV-04", "the consumer uses " + label + ": it imported a tensor in that device's memory and "
                                "read its values back (its adapter does not declare the device)");
      f.settle(ctx);
      check_deleted_once(ctx, f, "DEL-02", "the imported tensor is deleted exactly once after its array dies");
      return;
    }
    // PS (the Python specification): a consumer "should raise a BufferError" for a device it
    // cannot use; the array API's from_dlpack lists BufferError for the same case.
    if (!f.result.raised) {
      auto d = device_of(f.result.value);
      ctx.check(false, "DEV-04", "a tensor on " + label + " is refused by a consumer that cannot use it", "BufferError",
                "imported it" + (d ? fmt::format(" as device ({}, {})", d->first, d->second) : std::string()));
    } else {
      ctx.check(f.result.is("BufferError"), "DEV-04", "a tensor on " + label + " that the consumer cannot use is "
                "refused with BufferError", "BufferError", f.result.text);
    }
    f.settle(ctx);
    check_deleted_once(ctx, f, "DEL-08", "the refused tensor is deleted exactly once");
  });
}

DLPV_CASES {
  Declare("python.consumer.device.unusable", "a tensor on {target}, a device the consumer does not declare, is refused "
          "with BufferError and deleted once")
      .should({"DEV-04", "DEL-08", "DEL-02"}).python()
      .combine("target", {"cuda", "opencl", "metal", "rocm", "oneapi", "webgpu", "undefined"})
      .needs({need::import_legacy}).proven_by({"consumer_gpu_assertion", "consumer_exception_types"})
      .run(device_unusable);
}

void device_same(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    Feed f = feed_plain(ctx, ps);
    const DLDevice home = f.made->spec().device;  // the package's home device (CPU, or CUDA for CuPy)
    if (!ctx.check(!f.result.raised, "DEV-07", "a tensor on the package's home device is imported", "an array",
                   f.result.what()))
      return;
    auto d = device_of(f.result.value);
    if (!d) ctx.skip("the imported array has no __dlpack_device__ to say where it lives");
    ctx.check(*d == std::pair<int, int>{static_cast<int>(home.device_type), home.device_id}, "DEV-07",
              "from_dlpack(x) with device=None stays on x's device",
              fmt::format("({}, {})", static_cast<int>(home.device_type), home.device_id),
              fmt::format("({}, {})", d->first, d->second));
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.consumer.device.same", "the imported array lives on the producer's device")
      .must({"DEV-07"}).python()
      .needs({need::import_legacy}).proven_by({"consumer_result_flags"})
      .run(device_same);
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
                  fmt::format("a stream is passed to {} producer only after asking __dlpack_device__",
                              with_article(device_name(dev))),
                  "__dlpack_device__ first", calls_text(f.p()));
      }
      f.settle(ctx);
    }
    if (with_stream == 0) ctx.check(true, "DEV-09", "no stream was passed without knowing the device (none was passed at all)");
    // The Python specification: __dlpack__() and __dlpack_device__() "will be called from
    // within from_dlpack(), to query what device the array is on ... and to access the data".
    // A consumer that never asks where a CPU tensor lives before taking it (NumPy 2.2-2.4) has
    // not broken a stream rule, but it has skipped the query this rule asks for.
    Feed f = stream_feed(ctx, ps, DLDevice{kDLCPU, 0});
    bool queried = false, exported = false;
    for (auto call : f.p().calls()) {
      const std::string name = py::str(py::reinterpret_borrow<py::tuple>(call)[0]);
      if (name == "__dlpack_device__" && !exported) queried = true;
      if (name == "__dlpack__") exported = true;
    }
    if (exported)
      ctx.check(queried, "DEV-09", "from_dlpack asks __dlpack_device__ before calling __dlpack__ on a CPU producer",
                "__dlpack_device__ first", calls_text(f.p()));
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.consumer.device.query_first", "__dlpack_device__ is called before a stream is passed to __dlpack__")
      .should({"DEV-09"}).python()
      .needs({need::import_legacy, need::consumer_protocol})
      .proven_by({"consumer_device_query_late", "consumer_device_never_queried"})
      .run(device_query_first);
}

// DEV-08: from_dlpack(x, device=<cpu>) of a device array yields host data: the consumer asks
// the producer for a host copy (dl_device=(kDLCPU, 0)) or copies itself; a library that cannot
// at all raises BufferError. Without a GPU the scripted producer's CUDA-labelled tensor is host memory
// holding bytes that are not the values (a CPU consumer cannot legitimately read it): only the
// host copy holds the pattern. With a GPU it is real device memory holding the values.
void device_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    const bool v = speaks_versioned(ps);
    py::object a = ps.adapter();
    py::object cpu = py::hasattr(a, "cpu_device") ? a.attr("cpu_device")() : py::str("cpu");
    MadeSpec host;
    MadeSpec spec = labelled_spec(DLDevice{kDLCUDA, 0});
    host.flags = v ? DLPACK_FLAG_BITMASK_IS_COPIED : 0;
    auto copy = MadeTensor::make(host, v);
    py::dict kw;
    kw["device"] = cpu;
    Feed f = feed(ctx, ps, spec, v, kw, [&](ProducerScript& c) {
      c.host_managed = v ? static_cast<void*>(copy->versioned()) : static_cast<void*>(copy->legacy());
      c.host_versioned = v;
      const DLTensor& t = v ? static_cast<DLManagedTensorVersioned*>(c.managed)->dl_tensor
                            : static_cast<DLManagedTensor*>(c.managed)->dl_tensor;
      // Host memory under the label: not the values (only a host copy holds them). Real
      // device memory already holds the values, which a real device-to-host copy brings back.
      if (!spec.device_memory) std::memset(static_cast<char*>(t.data) + t.byte_offset, 0xA5, copy->expected().size());
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
      ctx.check_as(Severity::must, diff.empty(), "DEV-08",
                "from_dlpack(x, device=cpu) of a CUDA array holds the array's values in host memory (from a "
                "dl_device=(1, 0) copy or the consumer's own device-to-host copy)",
                "the pattern", diff + " (calls: " + calls + ")");
    }
    f.settle(ctx);
  });
}

DLPV_CASES {
  Declare("python.consumer.device.to_cpu", "from_dlpack(x, device=cpu) of a CUDA array yields its values on the host")
      .must({"DEV-08"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_device_cpu_wraps"})
      .run(device_cpu);
}

}  // namespace
}  // namespace dlpv::python
