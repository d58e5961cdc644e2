// cases/support/devices.hpp: the CUDA memory kinds and element types the device.* cases cover
// (docs/design.md §8).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack/dlpack.h>
#include <dlpack_validate/case.hpp>
#include <dlpack_validate/declare.hpp>

#include <string>
#include <vector>

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

/// The "device" axis: the devices' names, the step that gives a case its device, and the
/// device of a running case.
inline std::vector<std::string> cuda_device_names() {
  std::vector<std::string> out;
  for (const CaseCudaDevice& d : kCudaDevices) out.push_back(d.name);
  return out;
}
inline std::vector<std::string> device_dtypes() { return {std::begin(kDeviceDtypes), std::end(kDeviceDtypes)}; }
inline const CaseCudaDevice& cuda_device_named(const std::string& name) {
  for (const CaseCudaDevice& d : kCudaDevices)
    if (name == d.name) return d;
  return kCudaDevices[0];  // unreachable: the axis holds only these names
}
inline void declare_cuda_device(Declare& declaration, const std::string& name) {
  const CaseCudaDevice& d = cuda_device_named(name);
  declaration.device(CaseDevice{{d.type, d.id}, d.name});
  declaration.also_needs(need::cuda_driver);  // need_cuda's first question, settled before a worker starts
}
inline const CaseCudaDevice& cuda_device_of(CaseContext& ctx) {
  return cuda_device_named(ctx.info().params.at("device"));
}

}  // namespace dlpv::cases
