// cases/stream/producer.cpp: stream.producer.*: the stream rules of a CUDA producer, with a
// real race on a GPU: the consumer's stream sees final data (STRM-05), stream=-1 does not
// synchronise (STRM-06), a copy for a consumer stream runs on it (KW-06), dl_device=CPU gives a
// synchronised host copy flagged IS_COPIED (STRM-09, FLAG-05). Without a CUDA driver and
// device every case is a skip that says so.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <fmt/format.h>

#include <chrono>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {


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

// STRM-05: the producer's data is written late on its own stream; the validator reads on its
// own stream right away. Without the producer making that stream wait, the read is stale.
void race(CaseContext& ctx) {
  need_cuda(ctx, 0);
  const bool versioned = ctx.versioned();
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

DLPV_CASES {
  Declare("stream.producer.race.cuda0", "data written late on the producer's stream is final on the consumer's stream")
      .must({"STRM-05", "DEV-02"}).role(Role::producer).device(CaseDevice{{kDLCUDA, 0}, "cuda0"}).needs({need::cuda_driver})
      .per_kind(kBothKinds)
      .proven_by({"stream_ignored"})
      .run(race);
}

// STRM-06: stream=-1 asks the producer not to synchronise at all. Observed by timing, and only
// for a producer shown to leave device work pending (an export to a consumer stream leaves
// that stream waiting): then an export with -1 that takes long and leaves nothing pending has
// waited for the device.
void no_sync(CaseContext& ctx) {
  using clock = std::chrono::steady_clock;
  need_cuda(ctx, 0);
  const bool versioned = ctx.versioned();
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

DLPV_CASES {
  Declare("stream.producer.no_sync.cuda0", "stream=-1: the producer returns without waiting for its device work")
      .must({"STRM-06"}).role(Role::producer).device(CaseDevice{{kDLCUDA, 0}, "cuda0"}).needs({need::cuda_driver})
      .per_kind(kBothKinds)
      .proven_by({"minus_one_syncs"})
      .run(no_sync);
}

// KW-06: a copy made for a consumer stream runs on that stream. The validator first blocks
// its stream S with a long kernel, then asks for a copy (copy=True, stream=S): a copy on S
// cannot land before that kernel is over, so no read of the copy made on another stream while
// S is still inside the kernel may find the final values.
enum class CopyRead { off_stream, on_stream, inconclusive, not_device };

// One try: block the consumer stream for `cycles` GPU clocks, ask for a copy of a `dtype`
// tensor, and read it again and again on a second stream until S is past its kernel.
// Reading once is not enough: a copy made off S can be asynchronous too (a synchronous
// host-to-device copy from pageable memory may return before its DMA lands, and on an H200
// the first read then found the old bytes while later ones found the copy), so the try reads
// until the kernel's end marker is reached and calls the copy off-stream as soon as one read
// made wholly inside the kernel finds the final values. Each try uses a dtype no other device
// case puts on the device (int32, then int16: different bytes), so memory recycled from an
// earlier case or an earlier try cannot hold the same pattern by chance.
CopyRead try_copy_on_stream(CaseContext& ctx, uint64_t cycles, DLDataType dtype) {
  const bool versioned = ctx.versioned();
  ScopedStream stream(ctx), other(ctx);
  void* consumer_stream = stream.get();
  void* other_stream = other.get();
  Request r(dtype, {128, 1024}, DLPV_LAYOUT_CONTIGUOUS);
  r.req.device = DLDevice{kDLCUDA, 0};
  r.req.stream = stream.handle();
  r.req.flags |= DLPV_REQ_COPY;
  const std::vector<uint8_t> want = expected_bytes(dtype, r.shape, 0);
  if (!cuda::delay_fill(nullptr, 0, 0, cycles, consumer_stream))
    ctx.harness_error("cannot launch the blocking kernel: " + cuda::last_error());
  // Marks the end of the blocking kernel. Asked after a read, an unreached marker is certain
  // evidence that S had not got past the kernel while the read ran, so nothing queued behind
  // it can have run. (Recording a fresh event after the read and querying it at once, as
  // stream_idle does, can answer "not ready" on a busy GPU although the stream's work is
  // done: on an H100 shared by four runs that made the reference plugin fail.)
  struct Marker {
    void* m;
    ~Marker() { cuda::destroy_marker(m); }
  } kernel_end{cuda::record_marker(consumer_stream)};
  if (!kernel_end.m) ctx.harness_error("cannot record an event on the consumer stream: " + cuda::last_error());
  Exported e = export_or_skip(ctx, versioned, r, "KW-06");
  // A consumer releases a tensor only after its own work on it is done: wait before the
  // deleter runs (this is destroyed before `e`).
  struct SyncFirst { ~SyncFirst() { cuda::synchronize_device(); } } sync_first;
  ctx.phase("read");
  const DLTensor& t = e.tensor();
  const char* data = static_cast<const char*>(t.data) + t.byte_offset;
  const cuda::PointerInfo pi = cuda::pointer_info(data);
  if (!ctx.check(t.device.device_type == kDLCUDA && pi.known && pi.memory_type == 2, "DEV-02",
                 "the copy is CUDA device memory on the requested device", "device memory on cuda:0",
                 fmt::format("{}, {}", device_name(t.device),
                             pi.known ? fmt::format("memory type {}", pi.memory_type) : "not CUDA memory")))
    return CopyRead::not_device;
  std::vector<uint8_t> got(want.size());
  // Bounded by the kernel: the loop ends when S gets past it (or the case's time limit ends
  // the worker, charged to this phase).
  for (int reads = 0;; ++reads) {
    if (!cuda::copy_to_host_async(data, got.data(), got.size(), other_stream) || !cuda::synchronize(other_stream))
      ctx.harness_error("reading on a second stream failed: " + cuda::last_error());
    if (cuda::marker_reached(kernel_end.m))  // this read may have run after the kernel: it proves nothing
      return reads == 0 ? CopyRead::inconclusive : CopyRead::on_stream;
    if (describe_mismatch(dtype, want, got).empty()) return CopyRead::off_stream;
  }
}

// KW-06 (above). When the kernel was over before the first read (a GPU shared with other work
// runs it slower or later), the try tells nothing and is made once more with a kernel four
// times as long.
void copy_on_stream(CaseContext& ctx) {
  need_cuda(ctx, 0);
  cuda::use_device(0);
  CopyRead got = CopyRead::inconclusive;
  // About 0.2 s, then 0.8 s of GPU clock (and of the emulated driver's clock) ahead of the copy.
  const struct { uint64_t cycles; DLDataType dtype; } tries[] = {{400000000ull, {kDLInt, 32, 1}},
                                                                 {1600000000ull, {kDLInt, 16, 1}}};
  for (const auto& a : tries) {
    got = try_copy_on_stream(ctx, a.cycles, a.dtype);
    if (got != CopyRead::inconclusive) break;
  }
  if (got == CopyRead::not_device) return;
  if (got == CopyRead::inconclusive)
    ctx.skip("inconclusive: the validator's blocking kernel had already finished when the copy was first read (twice)");
  ctx.check(got == CopyRead::on_stream, "KW-06",
            "copy=True with a consumer stream: the copy runs on that stream (behind the work already queued there)",
            "not yet done while the consumer stream is blocked",
            "complete while the consumer stream was still blocked: the copy ran off the consumer's stream");
}

DLPV_CASES {
  Declare("stream.producer.copy_on_stream.cuda0", "copy=True with a consumer stream: the copy runs on that stream")
      .must({"KW-06", "DEV-02"}).role(Role::producer).device(CaseDevice{{kDLCUDA, 0}, "cuda0"}).needs({need::cuda_driver})
      .per_kind(kBothKinds)
      .proven_by({"copy_off_stream"})
      .run(copy_on_stream);
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

DLPV_CASES {
  Declare("stream.producer.dl_device_cpu.cuda0", "dl_device=CPU from a CUDA array: a synchronised host copy flagged IS_COPIED")
      .must({"STRM-09", "FLAG-05"}).role(Role::producer).device(CaseDevice{{kDLCUDA, 0}, "cuda0"}).needs({need::cuda_driver})
      .per_kind({StructKind::versioned})
      .proven_by({"dl_device_no_sync", "no_is_copied"})
      .run(dl_device_cpu);
}

}  // namespace
}  // namespace dlpv::cases
