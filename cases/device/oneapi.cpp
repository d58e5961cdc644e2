// cases/device/oneapi.cpp: device.oneapi.*: a producer's export on a SYCL device (kDLOneAPI
// device 0) is labelled as the memory really is, USM of the runtime's default context, and
// holds the pattern read back through the runtime (DEV-02, LAYOUT-07). The validator reaches
// the device through dpctl's C interface (include/dlpack_validate/sycl_interface.h: the path in
// DLPV_SYCL_INTERFACE, or dpctl already loaded in a Python worker); without one every case is a
// skip that says so.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/sycl.hpp>
#include <fmt/format.h>

#include "support/devices.hpp"
#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void producer_on_oneapi(CaseContext& ctx) {
  std::string why;
  if (!sycl::available(&why)) ctx.skip("this case is for machines with a SYCL device: " + why);
  const bool versioned = ctx.versioned();
  Request r(ctx.dtype(), {3, 4}, ctx.layout());
  r.req.device = DLDevice{static_cast<DLDeviceType>(DLPV_DEV_ONEAPI), 0};
  Exported e = export_or_skip(ctx, versioned, r, "DEV-02");
  inspect_export(ctx, e, r, versioned);
}

DLPV_CASES {
  Declare("device.oneapi.producer", "{kind} export of {layout} {dtype} on oneapi:0 is USM of the SYCL device and holds "
          "the pattern")
      .must({"DEV-02", "LAYOUT-07"}).role(Role::producer)
      .device(CaseDevice{{static_cast<DLDeviceType>(DLPV_DEV_ONEAPI), 0}, "oneapi0"})
      .combine("dtype", device_dtypes())
      .combine("layout", {"contiguous", "fortran", "strided", "offset"})
      .per_kind(kBothKinds)
      .proven_by({"oneapi_host_labelled"})
      .run(producer_on_oneapi);
}

}  // namespace
}  // namespace dlpv::cases
