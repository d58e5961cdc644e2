// cases/python/stream.cpp: python.stream.*: non-None streams for CPU arrays are rejected
// (STRM-04); on a device whose streams are objects (a SYCL queue for kDLOneAPI), an export asked
// with one is ordered after the array's pending work (STRM-05).
// SPDX-License-Identifier: Apache-2.0
#include <optional>

#include <dlpack_validate/tensor.hpp>

#include "python/support/py_producer.hpp"

namespace dlpv::python {
namespace {

void stream_cpu(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object x = ps.make(kShape, kF32, "contiguous", false, DLDevice{kDLCPU, 0});  // a CUDA-only package: a skip
    for (int s : {1, 2}) {
      py::dict kw = newest_kwargs(ps);
      kw["stream"] = s;
      Call c = call_dlpack(x, kw);
      ctx.check(c.raised, "STRM-04", fmt::format("stream={} for a CPU array (streams must be None there) is rejected", s),
                "an exception", c.what());
    }
  });
}

DLPV_CASES {
  Declare("python.stream.cpu_rejects", "non-None streams for CPU arrays are rejected")
      .should({"STRM-04"}).python().also_needs(need::producer_protocol)
      .proven_by({"stream_accepted"})
      .run(stream_cpu);
}

// STRM-05 (MUST): "given a consumer stream, the producer makes the data safe to use on it". For
// devices whose streams are objects the libraries agree on (array API __dlpack__: "for SYCL one
// may want to use an object containing an in-order sycl::queue"), the adapter makes one
// (make_stream(device)), an array whose last writes are still queued (pending(shape, dtype,
// device)) and reads the exported memory through the stream (read_on_stream(address, nbytes,
// stream)): a read ordered on the consumer's queue must see the final elements.
void stream_queue_ordered(CaseContext& ctx) {
  with_python(ctx, [&](PythonSubject& ps) {
    py::object a = ps.adapter();
    for (const char* hook : {"make_stream", "pending", "read_on_stream"})
      if (!py::hasattr(a, hook))
        ctx.skip(fmt::format("the adapter names no stream objects for the package's devices (optional {}(): "
                             "docs/adapters.md)",
                             hook));
    std::optional<DLDevice> where;
    py::object queue;
    std::string why_none;
    for (const DLDevice& d : ps.devices()) {
      const int t = static_cast<int>(d.device_type);
      if (t == kDLCPU || t == kDLCUDA || t == kDLROCM) continue;  // None, or integer streams: other cases
      Call q = attempt([&] { return a.attr("make_stream")(py::make_tuple(t, d.device_id)); });
      if (q.raised) {
        why_none += (why_none.empty() ? "" : "; ") + device_name(d) + ": " + q.text;
        continue;
      }
      where = d;
      queue = q.value;
      break;
    }
    if (!where)
      ctx.skip("the package's devices have no stream objects the adapter can make (streams are None on the CPU and "
               "integers on CUDA and ROCm: other cases judge those)" +
               (why_none.empty() ? std::string() : " (" + why_none + ")"));
    const std::vector<int64_t> shape{256, 256};
    const py::tuple dev = py::make_tuple(static_cast<int>(where->device_type), where->device_id);
    ctx.phase("make");
    py::object x = a.attr("pending")(py::make_tuple(shape[0], shape[1]), py::make_tuple(kF32.code, kF32.bits), dev);
    ctx.phase("export");
    py::dict kw = newest_kwargs(ps);
    kw["stream"] = queue;
    Call c = call_dlpack(x, kw);
    if (c.raised)
      ctx.skip(fmt::format("the package does not take its own {} stream object ({}) as __dlpack__(stream=...): {} "
                           "(supporting streams is optional, STRM-10)",
                           device_name(*where), py::repr(queue).cast<std::string>(), c.text));
    Taken t = take(ctx, c.value, "STRM-05");
    const DLTensor* tensor = t.tensor();
    const std::vector<uint8_t> want = expected_bytes(kF32, shape, DLPV_LAYOUT_CONTIGUOUS);
    bool compact = tensor->ndim == 2 && tensor->shape[0] == shape[0] && tensor->shape[1] == shape[1] &&
                   (!tensor->strides || (tensor->strides[1] == 1 && tensor->strides[0] == shape[1]));
    if (!compact) {
      t.release();
      ctx.skip("the exported tensor is not the compact 256x256 float32 array asked for: its layout cases judge that");
    }
    ctx.phase("read");
    const uintptr_t address = reinterpret_cast<uintptr_t>(tensor->data) + tensor->byte_offset;
    Call r = attempt([&] {
      return a.attr("read_on_stream")(py::int_(static_cast<unsigned long long>(address)), py::int_(want.size()), queue);
    });
    std::string diff;
    if (r.raised) {
      diff = "reading on the queue raised " + r.text;
    } else {
      const std::string got = r.value.cast<std::string>();
      diff = describe_mismatch(kF32, want, std::vector<uint8_t>(got.begin(), got.end()));
    }
    ctx.phase("release");
    t.release();
    // An exception the deleter left set is DEL-09's to judge (python.deleter.no_python_error); it
    // must not make this case's next call fail (a planted deleter_sets_error did, after other cases).
    if (PyErr_Occurred()) PyErr_Clear();
    if (py::hasattr(a, "synchronize")) a.attr("synchronize")();
    if (r.raised) ctx.harness_error(diff);
    ctx.check_as(Severity::must, diff.empty(), "STRM-05",
              fmt::format("an export asked with {} stream object is ordered after the array's queued writes: a read "
                          "on that stream sees the final elements",
                          with_article(device_name(*where))),
              "the final elements", diff);
  });
}

DLPV_CASES {
  Declare("python.stream.queue_ordered", "an export asked with the device's own stream object (a SYCL queue) is "
          "ordered after the array's queued work")
      .must({"STRM-05"}).python().also_needs(need::producer_protocol)
      .proven_by({"queue_not_ordered"})
      .run(stream_queue_ordered);
}

}  // namespace
}  // namespace dlpv::python
