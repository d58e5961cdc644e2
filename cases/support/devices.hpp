// cases/support/devices.hpp: the CUDA memory kinds and element types the device.* cases cover
// (DESIGN §8).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack/dlpack.h>

namespace dlpv::cases {

/// A device a case puts its tensor on: the id segment and record label, and the device.
struct CaseCudaDevice {
  const char* name;
  DLDeviceType type;
  int32_t id;
};
inline constexpr CaseCudaDevice kCudaDevices[] = {{"cuda0", kDLCUDA, 0}, {"cuda1", kDLCUDA, 1},
                                                  {"cuda_host", kDLCUDAHost, 0}, {"cuda_managed", kDLCUDAManaged, 0}};

/// Element types every device case runs with: one per width and kind that array libraries put
/// on devices (sub-byte and fp8 types stay with the CPU catalogue).
inline constexpr const char* kDeviceDtypes[] = {"float32", "float16", "int64", "uint8", "bool", "complex128"};

}  // namespace dlpv::cases
