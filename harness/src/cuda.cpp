// harness/src/cuda.cpp: the harness's CUDA access over the dlopen'd driver API.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <dlpack_validate/cuda_driver.h>
#include <dlpack_validate/plugin.h>
#include <fmt/format.h>

#include <mutex>

namespace dlpv::cuda {
namespace {

struct State {
  DLPVCuda api{};
  bool ok = false;
  int devices = 0;
  std::string why;
  dlpv_CUfunction delay = nullptr;
  bool delay_tried = false;
};

thread_local std::string t_error;

bool check(dlpv_CUresult rc, const char* what) {
  if (rc == 0) return true;
  t_error = fmt::format("{} failed with CUDA error {}", what, rc);
  return false;
}

State& state() {
  static State s;
  static std::once_flag once;
  std::call_once(once, [] {
    char why[512] = {};
    if (!dlpv_cuda_load(&s.api, why, sizeof why)) {
      s.why = why;
      return;
    }
    if (s.api.cuInit(0) != 0) {
      s.why = "CUDA driver present but cuInit failed (no usable device)";
      return;
    }
    if (s.api.cuDeviceGetCount(&s.devices) != 0 || s.devices == 0) {
      s.why = "CUDA driver present but no CUDA device";
      return;
    }
    s.ok = true;
  });
  return s;
}

dlpv_CUdeviceptr dptr(const void* p) { return static_cast<dlpv_CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

bool available(std::string* why) {
  State& s = state();
  if (!s.ok && why) *why = s.why;
  return s.ok;
}

int device_count() { return available() ? state().devices : 0; }

bool use_device(int ordinal, std::string* why) {
  if (!available(why)) return false;
  State& s = state();
  if (ordinal < 0 || ordinal >= s.devices) {
    if (why) *why = fmt::format("no CUDA device {} ({} present)", ordinal, s.devices);
    return false;
  }
  dlpv_CUdevice dev = 0;
  dlpv_CUcontext ctx = nullptr;
  if (!check(s.api.cuDeviceGet(&dev, ordinal), "cuDeviceGet") ||
      !check(s.api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
      !check(s.api.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")) {
    if (why) *why = t_error;
    return false;
  }
  return true;
}

PointerInfo pointer_info(const void* p) {
  PointerInfo info;
  if (!available() || !p) return info;
  State& s = state();
  unsigned int type = 0, managed = 0;
  int ordinal = -1;
  if (s.api.cuPointerGetAttribute(&type, DLPV_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dptr(p)) != 0) return info;
  info.known = true;
  info.memory_type = static_cast<int>(type);
  if (s.api.cuPointerGetAttribute(&managed, DLPV_CU_POINTER_ATTRIBUTE_IS_MANAGED, dptr(p)) == 0)
    info.managed = managed != 0;
  if (s.api.cuPointerGetAttribute(&ordinal, DLPV_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, dptr(p)) == 0)
    info.device = ordinal;
  return info;
}

bool copy_to_host(const void* src, void* dst, size_t n) {
  return available() && check(state().api.cuMemcpyDtoH(dst, dptr(src), n), "cuMemcpyDtoH");
}

bool copy_to_device(void* dst, const void* src, size_t n) {
  return available() && check(state().api.cuMemcpyHtoD(dptr(dst), src, n), "cuMemcpyHtoD");
}

void* allocate(int device_type, int device, size_t n) {
  if (!use_device(device)) return nullptr;
  State& s = state();
  if (device_type == kDLCUDA) {
    dlpv_CUdeviceptr p = 0;
    return check(s.api.cuMemAlloc(&p, n ? n : 1), "cuMemAlloc") ? reinterpret_cast<void*>(p) : nullptr;
  }
  if (device_type == kDLCUDAManaged) {
    dlpv_CUdeviceptr p = 0;
    return check(s.api.cuMemAllocManaged(&p, n ? n : 1, DLPV_CU_MEM_ATTACH_GLOBAL), "cuMemAllocManaged")
               ? reinterpret_cast<void*>(p) : nullptr;
  }
  if (device_type == kDLCUDAHost) {
    void* p = nullptr;
    return check(s.api.cuMemAllocHost(&p, n ? n : 1), "cuMemAllocHost") ? p : nullptr;
  }
  t_error = fmt::format("device type {} is not a CUDA memory kind", device_type);
  return nullptr;
}

void release(int device_type, void* p) {
  if (!p || !available()) return;
  if (device_type == kDLCUDAHost) state().api.cuMemFreeHost(p);
  else state().api.cuMemFree(dptr(p));
}

void* create_stream() {
  dlpv_CUstream st = nullptr;
  if (!available() || !check(state().api.cuStreamCreate(&st, DLPV_CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
    return nullptr;
  return st;
}

void destroy_stream(void* stream) {
  if (stream && available()) state().api.cuStreamDestroy(stream);
}

bool synchronize(void* stream) {
  return available() && check(state().api.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

bool delay_fill(void* dst, uint32_t value, size_t n, uint64_t cycles, void* stream) {
  if (!available()) return false;
  State& s = state();
  if (!s.delay_tried) {
    s.delay_tried = true;
    dlpv_CUmodule module = nullptr;
    if (check(s.api.cuModuleLoadData(&module, dlpv_delay_fill_ptx), "cuModuleLoadData(delay_fill PTX)"))
      check(s.api.cuModuleGetFunction(&s.delay, module, "dlpv_delay_fill"), "cuModuleGetFunction");
  }
  if (!s.delay) return false;
  dlpv_CUdeviceptr d = dptr(dst);
  unsigned long long count = n, spin = cycles;
  void* params[] = {&d, &value, &count, &spin};
  const unsigned block = 256, grid = static_cast<unsigned>((n + block - 1) / block);
  return check(s.api.cuLaunchKernel(s.delay, grid ? grid : 1, 1, 1, block, 1, 1, 0, stream, params, nullptr),
               "cuLaunchKernel(delay_fill)");
}

bool copy_to_host_async(const void* src, void* dst, size_t n, void* stream) {
  return available() &&
         check(state().api.cuMemcpyDtoHAsync(dst, dptr(src), n, stream), "cuMemcpyDtoHAsync");
}

void* record_marker(void* stream) {
  if (!available()) return nullptr;
  State& s = state();
  dlpv_CUevent ev = nullptr;
  if (!check(s.api.cuEventCreate(&ev, 0), "cuEventCreate")) return nullptr;
  if (!check(s.api.cuEventRecord(ev, stream), "cuEventRecord")) {
    s.api.cuEventDestroy(ev);
    return nullptr;
  }
  return ev;
}

bool marker_reached(void* marker) {
  if (!marker || !available()) return true;
  return state().api.cuEventQuery(static_cast<dlpv_CUevent>(marker)) != DLPV_CUDA_ERROR_NOT_READY;
}

void destroy_marker(void* marker) {
  if (marker && available()) state().api.cuEventDestroy(static_cast<dlpv_CUevent>(marker));
}

bool stream_idle(void* stream) {
  void* m = record_marker(stream);  // a failure to record counts as idle, as before
  const bool idle = marker_reached(m);
  destroy_marker(m);
  return idle;
}

bool synchronize_device() {
  return available() && check(state().api.cuCtxSynchronize(), "cuCtxSynchronize");
}

std::string last_error() { return t_error; }

}  // namespace dlpv::cuda
