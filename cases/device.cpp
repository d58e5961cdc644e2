// cases/device.cpp: per-device behaviour (DESIGN §8): CUDA device, pinned and managed
// memory, as producer and consumer, with the label checked against the pointer's real
// attributes; and the stream rules (STRM-04 on CPU everywhere; STRM-05/09 with a real race on
// a GPU). Without a CUDA driver and device every CUDA case is a skip that says so.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <fmt/format.h>

#include <chrono>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

const DLDataType kFloat32{kDLFloat, 32, 1};

struct Dev {
  const char* name;
  DLDeviceType type;
  int32_t id;
};
const Dev kDevices[] = {{"cuda0", kDLCUDA, 0}, {"cuda1", kDLCUDA, 1},
                        {"cuda_host", kDLCUDAHost, 0}, {"cuda_managed", kDLCUDAManaged, 0}};

// Element types every device case runs with: one per width and kind that array libraries
// put on devices (sub-byte and fp8 types stay with the CPU catalogue).
const char* const kDeviceDtypes[] = {"float32", "float16", "int64", "uint8", "bool", "complex128"};

const Dev& device_param(CaseContext& ctx) {
  for (const Dev& d : kDevices)
    if (ctx.param("device") == d.name) return d;
  ctx.harness_error("unknown device " + ctx.param("device"));
}

// A CUDA stream of the validator's (the "consumer stream"), destroyed with the case.
class ScopedStream {
 public:
  explicit ScopedStream(CaseContext& ctx) : s_(cuda::create_stream()) {
    if (!s_) ctx.harness_error("cannot create a CUDA stream: " + cuda::last_error());
  }
  ~ScopedStream() { cuda::destroy_stream(s_); }
  ScopedStream(const ScopedStream&) = delete;
  ScopedStream& operator=(const ScopedStream&) = delete;
  void* get() const { return s_; }
  int64_t handle() const { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(s_)); }

 private:
  void* s_;
};

void producer_on_device(CaseContext& ctx) {
  const Dev& d = device_param(ctx);
  need_cuda(ctx, d.id);
  const bool versioned = ctx.param("version") == "versioned";
  const uint32_t layout = *layout_from_name(ctx.param("layout"));
  const DLDataType dtype = *dtype_from_name(ctx.param("dtype"));
  Request r(dtype, {3, 4}, layout);
  r.req.device = DLDevice{d.type, d.id};
  Exported e = export_or_skip(ctx, versioned, r, "DEV-02");
  inspect_export(ctx, e, r, versioned);
}

void consumer_on_device(CaseContext& ctx) {
  const Dev& d = device_param(ctx);
  need_cuda(ctx, d.id);
  MadeSpec spec;
  spec.dtype = *dtype_from_name(ctx.param("dtype"));
  const std::string& layout = ctx.param("layout");
  if (layout == "byte_offset") spec.extra_byte_offset = 64;
  else spec.layout = *layout_from_name(layout);
  spec.device = DLDevice{d.type, d.id};
  spec.device_memory = true;
  consumer_roundtrip(ctx, spec, ctx.param("version") == "versioned", "DEV-02", Refusal::skips,
                     fmt::format("a {} {} tensor in {} memory", ctx.param("dtype"), layout, d.name));
}

// STRM-04 (runs everywhere): a CPU export with a stream must be refused.
void cpu_rejects_stream(CaseContext& ctx) {
  const bool versioned = ctx.param("version") == "versioned";
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.stream = 1;
  Exported e;
  const int rc = export_raw(ctx, versioned, r, e);
  ctx.check(rc != DLPV_OK, "STRM-04", "a CPU export given a stream (1) is refused: CPU arrays take stream=None only",
            "a refusal", "exported (the stream value was accepted)");
}

// STRM-05: the producer's data is written late on its own stream; the validator reads on its
// own stream right away. Without the producer making that stream wait, the read is stale.
void race(CaseContext& ctx) {
  need_cuda(ctx, 0);
  const bool versioned = ctx.param("version") == "versioned";
  cuda::use_device(0);
  ScopedStream stream(ctx);
  void* consumer_stream = stream.get();
  Request r(kFloat32, {256, 1024}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.device = DLDevice{kDLCUDA, 0};
  r.req.stream = stream.handle();
  Exported e = export_or_skip(ctx, versioned, r, "STRM-05");
  ctx.phase("read");
  const DLTensor& t = e.tensor();
  const cuda::PointerInfo pi = cuda::pointer_info(static_cast<const char*>(t.data) + t.byte_offset);
  if (!ctx.check(t.device.device_type == kDLCUDA && pi.known && pi.memory_type == 2, "DEV-02",
                 "the exported tensor is CUDA device memory (so the consumer stream can read it)",
                 "device memory on cuda:0",
                 fmt::format("{}, {}", device_name(t.device),
                             pi.known ? fmt::format("memory type {}", pi.memory_type) : "not CUDA memory")))
    return;
  std::vector<uint8_t> got(static_cast<size_t>(256 * 1024) * 4);
  const bool ok = cuda::copy_to_host_async(static_cast<const char*>(t.data) + t.byte_offset, got.data(),
                                           got.size(), consumer_stream) && cuda::synchronize(consumer_stream);
  if (!ok) ctx.harness_error("reading on the consumer stream failed: " + cuda::last_error());
  const std::string diff = describe_mismatch(kFloat32, expected_bytes(kFloat32, r.shape, 0), got);
  ctx.check(diff.empty(), "STRM-05",
            "data read on the consumer's stream, immediately after export, is final (the producer "
            "made that stream wait for its work)", "the reference pattern", diff);
}

// STRM-06: stream=-1 asks the producer not to synchronise at all. Observed by timing, and only
// for a producer shown to leave device work pending (an export to a consumer stream leaves
// that stream waiting): then an export with -1 that takes long and leaves nothing pending has
// waited for the device.
void no_sync(CaseContext& ctx) {
  using clock = std::chrono::steady_clock;
  need_cuda(ctx, 0);
  const bool versioned = ctx.param("version") == "versioned";
  cuda::use_device(0);
  ScopedStream stream(ctx);
  void* consumer_stream = stream.get();
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };

  Request with_stream(kFloat32, {256, 1024}, DLPV_LAYOUT_CONTIGUOUS);
  with_stream.req.device = DLDevice{kDLCUDA, 0};
  with_stream.req.stream = stream.handle();
  const auto a0 = clock::now();
  bool pending = false;
  double export_ms = 0;
  {
    Exported e = export_or_skip(ctx, versioned, with_stream, "STRM-06");
    export_ms = ms(clock::now() - a0);
    pending = !cuda::stream_idle(consumer_stream);
  }
  cuda::synchronize_device();
  if (!pending)
    ctx.skip("inconclusive: an export to a consumer stream left no work pending on it, so this producer finishes "
             "its device work before returning and stream=-1 cannot be told apart");

  Request minus_one = with_stream;
  minus_one.req.stream = -1;
  ctx.phase("export");
  const auto b0 = clock::now();
  Exported e = export_or_skip(ctx, versioned, minus_one, "STRM-06");
  const auto b1 = clock::now();
  cuda::synchronize_device();
  const auto b2 = clock::now();
  const double minus_one_ms = ms(b1 - b0), left_ms = ms(b2 - b1);
  const bool waited = left_ms < 1.0 && minus_one_ms > 3 * export_ms + 5.0;
  ctx.check(!waited, "STRM-06",
            "with stream=-1 the producer does not synchronise (its export returns while its device work runs)",
            fmt::format("an export about as fast as with a consumer stream ({:.1f} ms), work left pending", export_ms),
            fmt::format("the export took {:.1f} ms and left {:.1f} ms of device work: it waited", minus_one_ms,
                        left_ms));
}

// KW-06: a copy made for a consumer stream runs on that stream. The validator first blocks
// its stream with a long kernel, then asks for a copy (copy=True, stream=S): a copy on S
// cannot finish before that kernel does, so reading the copy on another stream right away
// must not find the final values. (int32, a type no other device case puts on the device, so
// memory recycled from an earlier case cannot hold the same pattern by chance.)
void copy_on_stream(CaseContext& ctx) {
  need_cuda(ctx, 0);
  const bool versioned = ctx.param("version") == "versioned";
  cuda::use_device(0);
  ScopedStream stream(ctx), other(ctx);
  void* consumer_stream = stream.get();
  void* other_stream = other.get();
  const DLDataType int32{kDLInt, 32, 1};
  Request r(int32, {128, 1024}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.device = DLDevice{kDLCUDA, 0};
  r.req.stream = stream.handle();
  r.req.flags |= DLPV_REQ_COPY;
  // About 0.2 s of GPU clock (and of the emulated driver's clock) ahead of the copy.
  if (!cuda::delay_fill(nullptr, 0, 0, 400000000ull, consumer_stream))
    ctx.harness_error("cannot launch the blocking kernel: " + cuda::last_error());
  Exported e = export_or_skip(ctx, versioned, r, "KW-06");
  // A consumer releases a tensor only after its own work on it is done: wait before the
  // deleter runs (this is destroyed before `e`).
  struct SyncFirst { ~SyncFirst() { cuda::synchronize_device(); } } sync_first;
  ctx.phase("read");
  const DLTensor& t = e.tensor();
  const cuda::PointerInfo pi = cuda::pointer_info(static_cast<const char*>(t.data) + t.byte_offset);
  if (!ctx.check(t.device.device_type == kDLCUDA && pi.known && pi.memory_type == 2, "DEV-02",
                 "the copy is CUDA device memory on the requested device", "device memory on cuda:0",
                 fmt::format("{}, {}", device_name(t.device),
                             pi.known ? fmt::format("memory type {}", pi.memory_type) : "not CUDA memory")))
    return;
  std::vector<uint8_t> got(static_cast<size_t>(128 * 1024) * 4);
  const bool read = cuda::copy_to_host_async(static_cast<const char*>(t.data) + t.byte_offset, got.data(),
                                             got.size(), other_stream) && cuda::synchronize(other_stream);
  const bool blocked = !cuda::stream_idle(consumer_stream);
  if (!read) ctx.harness_error("reading on a second stream failed: " + cuda::last_error());
  if (!blocked)
    ctx.skip("inconclusive: the validator's blocking kernel had already finished when the copy was read");
  const bool final_values = describe_mismatch(int32, expected_bytes(int32, r.shape, 0), got).empty();
  ctx.check(!final_values, "KW-06",
            "copy=True with a consumer stream: the copy runs on that stream (behind the work already queued there)",
            "not yet done while the consumer stream is blocked",
            "already complete: the copy ran off the consumer's stream");
}

// STRM-09 + FLAG-05: dl_device=CPU from a CUDA array: a host copy, synchronised, IS_COPIED.
void dl_device_cpu(CaseContext& ctx) {
  need_cuda(ctx, 0);
  Request r(kFloat32, {256, 1024}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.device = DLDevice{kDLCUDA, 0};
  r.req.target_device = DLDevice{kDLCPU, 0};
  Exported e = export_or_skip(ctx, true, r, "STRM-09");
  ctx.phase("inspect");
  const DLTensor& t = e.tensor();
  ctx.check(t.device.device_type == kDLCPU, "STRM-09", "dl_device=(kDLCPU, 0) yields a CPU tensor", "cpu:0",
            device_name(t.device));
  ctx.check_as(Severity::must, (e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05",
               "a cross-device copy sets IS_COPIED", "bit 1 set", fmt::format("flags = {:#x}", e.v->flags));
  std::vector<uint8_t> got;
  std::string why;
  if (!ctx.check(gather_elements(t, got, why), "STRM-09", "the host copy is readable", "readable", why)) return;
  const std::string diff = describe_mismatch(kFloat32, expected_bytes(kFloat32, r.shape, 0), got);
  ctx.check(diff.empty(), "STRM-09", "the host copy holds the final data (the producer synchronised first)",
            "the reference pattern", diff);
}

// stream.producer.<what>.cuda0.<kind>: a producer case on CUDA device 0 with a consumer stream.
void add_stream_case(Registry& reg, const char* what, const std::string& kind, const char* title,
                     std::vector<std::string> requirements, void (*body)(CaseContext&)) {
  CaseInfo c;
  c.id = fmt::format("stream.producer.{}.cuda0.{}", what, kind);
  c.title = title;
  c.requirements = std::move(requirements);
  c.role = Role::producer;
  c.params = {{"device", "cuda0"}, {"version", kind}};
  c.needs = {kind == "versioned" ? "export_versioned" : "export_legacy"};
  c.body = body;
  reg.add(std::move(c));
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(device) {
  using namespace dlpv;
  for (bool versioned : {true, false}) {
    const std::string kind = cases::kind_name(versioned);
    for (const auto& d : cases::kDevices) {
      for (const char* dtype : cases::kDeviceDtypes) {
        for (const char* layout : {"contiguous", "fortran", "strided", "offset"}) {
          CaseInfo c;
          c.id = fmt::format("device.producer.{}.{}.{}.{}", d.name, dtype, layout, kind);
          c.title = fmt::format("{} export of {} {} on {} is labelled as the memory really is and holds the pattern",
                                kind, layout, dtype, d.name);
          c.requirements = {"DEV-02", "DEV-03", "LAYOUT-07"};
          c.role = Role::producer;
          c.params = {{"device", d.name}, {"dtype", dtype}, {"layout", layout}, {"version", kind}};
          c.needs = {versioned ? "export_versioned" : "export_legacy"};
          c.body = cases::producer_on_device;
          reg.add(std::move(c));
        }
        for (const char* layout : {"contiguous", "fortran", "strided", "byte_offset"}) {
          CaseInfo c;
          c.id = fmt::format("device.consumer.{}.{}.{}.{}", d.name, dtype, layout, kind);
          c.title = fmt::format("{} import of a {} {} tensor in {} memory reads back right", kind, layout, dtype, d.name);
          c.requirements = {"DEV-02", "DEL-02", std::string(layout) == "byte_offset" ? "LAYOUT-08" : "LAYOUT-07"};
          c.role = Role::consumer;
          c.params = {{"device", d.name}, {"dtype", dtype}, {"layout", layout}, {"version", kind}};
          c.needs = {versioned ? "import_versioned" : "import_legacy", "read_array", "release_array"};
          c.body = cases::consumer_on_device;
          reg.add(std::move(c));
        }
      }
    }
    CaseInfo s;
    s.id = "stream.cpu.rejects_stream." + kind;
    s.title = "a CPU export refuses a stream value (CPU takes stream=None only)";
    s.requirements = {"STRM-04"};
    s.severity = Severity::should;
    s.role = Role::producer;
    s.params = {{"device", "cpu"}, {"version", kind}};
    s.needs = {versioned ? "export_versioned" : "export_legacy"};
    s.body = cases::cpu_rejects_stream;
    reg.add(std::move(s));

    cases::add_stream_case(reg, "race", kind, "data written late on the producer's stream is final on the consumer's stream",
                           {"STRM-05", "DEV-02"}, cases::race);
    cases::add_stream_case(reg, "copy_on_stream", kind, "copy=True with a consumer stream: the copy runs on that stream",
                           {"KW-06", "DEV-02"}, cases::copy_on_stream);
    cases::add_stream_case(reg, "no_sync", kind, "stream=-1: the producer returns without waiting for its device work",
                           {"STRM-06"}, cases::no_sync);
  }
  CaseInfo c;
  c.id = "stream.producer.dl_device_cpu.cuda0.versioned";
  c.title = "dl_device=CPU from a CUDA array: a synchronised host copy flagged IS_COPIED";
  c.requirements = {"STRM-09", "FLAG-05"};
  c.role = Role::producer;
  c.params = {{"device", "cuda0"}, {"version", "versioned"}};
  c.needs = {"export_versioned"};
  c.body = cases::dl_device_cpu;
  reg.add(std::move(c));
}
