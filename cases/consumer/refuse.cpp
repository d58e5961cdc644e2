// cases/consumer/refuse.cpp: consumer.refuse.*: tensors a consumer must not misinterpret:
// ill-formed or unknown dtypes, opaque handles, foreign devices, the newest device types included
// (DTYPE-06/08/09, DEV-04), with
// DEL-08 on every refusal.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

struct Bad {
  const char* id;
  const char* req;
  Severity severity;
  DLDataType dtype;
  DLDevice device;
  const char* what;
};

void refuse(CaseContext& ctx, const Bad& b) {
  if (b.device.device_type == kDLCUDA && cuda::available())
    ctx.skip("a CUDA device is present here, so a consumer may use kDLCUDA tensors "
             "(device.consumer.cuda* test that); this case is for machines without one");
  MadeSpec spec;
  spec.dtype = b.dtype;
  spec.device = b.device;
  // A consumer that knows these tensors may hold them; the pattern bytes are well defined.
  consumer_must_refuse(ctx, spec, ctx.versioned(), b.req, b.what);
}

DLPV_CASES {
  static const Bad kBad[] = {
      {"dtype.float4_bits8", "DTYPE-06", Severity::must, {17, 8, 1}, {kDLCPU, 0}, "float4_e2m1fn declared with bits 8"},
      {"dtype.float6_bits8", "DTYPE-06", Severity::must, {15, 8, 1}, {kDLCPU, 0}, "float6_e2m3fn declared with bits 8"},
      {"dtype.unknown_code", "DTYPE-08", Severity::should, {200, 32, 1}, {kDLCPU, 0}, "dtype code 200"},
      {"dtype.float24", "DTYPE-08", Severity::should, {2, 24, 1}, {kDLCPU, 0}, "a 24-bit float"},
      {"dtype.float32x4", "DTYPE-08", Severity::should, {2, 32, 4}, {kDLCPU, 0}, "float32 with 4 lanes"},
      {"dtype.opaque_handle", "DTYPE-09", Severity::should, {3, 64, 1}, {kDLCPU, 0}, "kDLOpaqueHandle elements"},
      {"device.cuda", "DEV-04", Severity::should, {2, 32, 1}, {kDLCUDA, 0}, "a tensor on kDLCUDA (a CPU-only consumer cannot read it)"},
      {"device.vulkan", "DEV-04", Severity::should, {2, 32, 1}, {kDLVulkan, 0}, "a tensor on kDLVulkan"},
      // The newest device types, on dlpack's main branch after 1.3 (provisional: names.cpp): a
      // consumer built on older headers does not know them, one that does cannot reach a TPU's
      // or an Ascend NPU's memory on a machine without one. kDLTPUHost (20) is host memory, which
      // a consumer that knows the code may read: not asked.
      {"device.tpu", "DEV-04", Severity::should, {2, 32, 1}, {static_cast<DLDeviceType>(19), 0},
       "a tensor on kDLTPU (device type 19, after DLPack 1.3)"},
      {"device.ascend", "DEV-04", Severity::should, {2, 32, 1}, {static_cast<DLDeviceType>(21), 0},
       "a tensor on kDLAscend (device type 21, after DLPack 1.3)"},
  };
  // The "tensor" axis: the table's rows by id; each sets its own severity, dtype and device.
  std::vector<std::string> ids;
  for (const Bad& b : kBad) ids.push_back(b.id);
  auto bad_of = [](const std::string& id) -> const Bad& {
    for (const Bad& b : kBad)
      if (id == b.id) return b;
    return kBad[0];  // unreachable: the axis holds only the table's ids
  };
  Declare("consumer.refuse", "{kind} import refuses {what}")
      .role(Role::consumer)
      .combine("tensor", ids, [bad_of](Declare& d, const std::string& id) {
        const Bad& b = bad_of(id);
        d.level(b.severity, {b.req, "DEL-08"}).dtype(b.dtype).device(b.device)
            .title(fmt::format("{{kind}} import refuses {}", b.what))
            .proven_by({b.device.device_type != kDLCPU ? "any_device" : "dtype_by_bits"});
      })
      .per_kind(kBothKinds)
      .needs({need::release_array})
      .run([bad_of](CaseContext& ctx) { refuse(ctx, bad_of(ctx.info().params.at("tensor"))); });
}

}  // namespace
}  // namespace dlpv::cases
