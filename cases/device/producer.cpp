// cases/device/producer.cpp: device.producer.*: a producer's export in CUDA device, pinned and
// managed memory is labelled as the memory really is (checked against the pointer's attributes)
// and holds the pattern (DEV-02, DEV-03, LAYOUT-07). Without a CUDA driver and device every
// case is a skip that says so.
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/devices.hpp"
#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void producer_on_device(CaseContext& ctx, const CaseCudaDevice& d) {
  need_cuda(ctx, d.id);
  const bool versioned = ctx.versioned();
  Request r(ctx.dtype(), {3, 4}, ctx.layout());
  r.req.device = ctx.device();
  Exported e = export_or_skip(ctx, versioned, r, "DEV-02");
  inspect_export(ctx, e, r, versioned);
}

DLPV_CASES {
  for (StructKind k : kBothKinds)
    for (const CaseCudaDevice& d : kCudaDevices)
      for (const char* dtype : kDeviceDtypes)
        for (uint32_t layout : {DLPV_LAYOUT_CONTIGUOUS, DLPV_LAYOUT_FORTRAN, DLPV_LAYOUT_STRIDED, DLPV_LAYOUT_OFFSET})
          Declare(fmt::format("device.producer.{}.{}.{}.{}", d.name, dtype, layout_name(layout), to_string(k)),
                  fmt::format("{} export of {} {} on {} is labelled as the memory really is and holds the pattern",
                              to_string(k), layout_name(layout), dtype, d.name))
              .must({"DEV-02", "DEV-03", "LAYOUT-07"}).role(Role::producer)
              .kind(k).dtype(dtype).layout(layout).device(CaseDevice{{d.type, d.id}, d.name})
              .needs({export_need(k)})
              .proven_by({"cuda_wrong_device_id"})
              .run([&d](CaseContext& ctx) { producer_on_device(ctx, d); });
}

}  // namespace
}  // namespace dlpv::cases
