// cases/python/consumer/stream.cpp: python.consumer.stream.*: the stream from_dlpack passes to
// __dlpack__: never 0 for CUDA (STRM-01), never 1 or 2 for ROCm (STRM-02), None for CPU
// (STRM-03), the consumer's current stream (STRM-07).
// SPDX-License-Identifier: Apache-2.0
#include <functional>
#include <vector>

#include "python/support/py_consumer.hpp"

namespace dlpv::python {
namespace {

// `stream` of every recorded __dlpack__ call (None when not passed).
std::vector<py::object> streams(ScriptedProducer& p) {
  std::vector<py::object> out;
  for (auto call : p.calls()) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(call);
    if (py::str(t[0]).cast<std::string>() != "__dlpack__") continue;
    py::dict kw = py::reinterpret_borrow<py::dict>(t[1]);
    out.push_back(kw.contains("stream") ? py::reinterpret_borrow<py::object>(kw["stream"]) : py::none());
  }
  return out;
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
      ctx.check(allowed(s), req, fmt::format("the stream passed for {} producer follows the rule: {}",
                                             with_article(device_name(dev)), rule),
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

DLPV_CASES {
  Declare("python.consumer.stream.cuda", "a CUDA producer is never given stream 0")
      .must({"STRM-01"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_gpu_streams"})
      .run(stream_cuda);
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

DLPV_CASES {
  Declare("python.consumer.stream.rocm", "a ROCm producer is never given stream 1 or 2")
      .must({"STRM-02"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_gpu_streams"})
      .run(stream_rocm);
}

void consumer_stream_cpu(CaseContext& ctx) {
  stream_rules(ctx, DLDevice{kDLCPU, 0}, "STRM-03", "None (or no stream keyword)",
               [](const py::object& s) { return s.is_none(); });
}

DLPV_CASES {
  Declare("python.consumer.stream.cpu", "a CPU producer is given stream=None")
      .must({"STRM-03"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_stream_on_cpu"})
      .run(consumer_stream_cpu);
}

// STRM-07: the stream a consumer passes is the one it computes on. The adapter names that
// stream (current_stream); a CUDA-labelled scripted producer records what from_dlpack passes.
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

DLPV_CASES {
  Declare("python.consumer.stream.current", "the stream given to a CUDA producer is the consumer's current stream")
      .must({"STRM-07"}).python()
      .needs({need::import_legacy, need::consumer_protocol}).proven_by({"consumer_stream_not_current"})
      .run(stream_current);
}

}  // namespace
}  // namespace dlpv::python
