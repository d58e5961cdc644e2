// harness/include/dlpack_validate/sycl.hpp: what the harness needs from a SYCL runtime for
// kDLOneAPI memory (sycl_interface.h: dpctl's C interface, found at run time). Without one every
// call reports that and the oneAPI checks skip with the reason.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

namespace dlpv::sycl {

/// A SYCL runtime with a device is reachable (DLPV_SYCL_INTERFACE, or dpctl already loaded in
/// this process). `why` says what is missing. A failure is not remembered: a Python worker
/// may load dpctl later.
bool available(std::string* why = nullptr);
/// What `p` is in the default context (the one dpctl's queues share): DLPV_SYCL_USM_* of
/// sycl_interface.h (0: not USM, plain host memory).
int pointer_type(const void* p);
const char* pointer_type_name(int type);
/// Copy n bytes of USM to host memory, waiting for the copy; false on failure.
bool copy_to_host(const void* src, void* dst, size_t n);

}  // namespace dlpv::sycl
