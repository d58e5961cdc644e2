// harness/include/dlpack_validate/cuda.hpp: what the harness needs from CUDA, found at run
// time (cuda_driver.h). Without a driver or device every call reports that and the CUDA
// cases skip with the reason.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlpv::cuda {

/// Driver loaded, initialised, and at least one device present. `why` says what is missing.
bool available(std::string* why = nullptr);
int device_count();
/// Make `ordinal`'s primary context current on this thread.
bool use_device(int ordinal, std::string* why = nullptr);

struct PointerInfo {
  bool known = false;  ///< the driver knows this address (device, pinned or managed memory)
  int memory_type = 0; ///< 1 host (pinned), 2 device, 4 unified
  int device = -1;
  bool managed = false;
};
PointerInfo pointer_info(const void* p);

/// Copy n bytes of device (or managed) memory to the host; false on any driver error.
bool copy_to_host(const void* src, void* dst, size_t n);
bool copy_to_device(void* dst, const void* src, size_t n);

/// Allocate n bytes of memory for a DLPack device type (kDLCUDA, kDLCUDAHost,
/// kDLCUDAManaged) on `device`; nullptr on failure.
void* allocate(int device_type, int device, size_t n);
void release(int device_type, void* p);

/// Streams and the slow kernel of the stream cases.
void* create_stream();
void destroy_stream(void* stream);
bool synchronize(void* stream);
/// Spin for `cycles` GPU clocks, then write `value` to n 32-bit words at dst, on `stream`.
bool delay_fill(void* dst, uint32_t value, size_t n, uint64_t cycles, void* stream);
/// Enqueue a device-to-host copy on `stream` (the consumer's read).
bool copy_to_host_async(const void* src, void* dst, size_t n, void* stream);

/// True when all work enqueued on `stream` so far has completed (an event recorded and queried).
bool stream_idle(void* stream);
/// A marker recorded on `stream` now (an event); nullptr on failure. marker_reached: the stream
/// has run everything enqueued before the marker (unknown markers count as reached).
void* record_marker(void* stream);
bool marker_reached(void* marker);
void destroy_marker(void* marker);
/// Wait for all work of the current device (cuCtxSynchronize).
bool synchronize_device();

std::string last_error();

}  // namespace dlpv::cuda
