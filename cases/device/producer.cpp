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
  Declare("device.producer", "{kind} export of {layout} {dtype} on {device} is labelled as the memory really is and holds the pattern")
      .must({"DEV-02", "DEV-03", "LAYOUT-07"}).role(Role::producer)
      .combine("device", cuda_device_names(), declare_cuda_device)
      .combine("dtype", device_dtypes())
      .combine("layout", {"contiguous", "fortran", "strided", "offset"})
      .per_kind(kBothKinds)
      .proven_by({"cuda_wrong_device_id"})
      .run([](CaseContext& ctx) { producer_on_device(ctx, cuda_device_of(ctx)); });
}

}  // namespace
}  // namespace dlpv::cases
