/* include/dlpack_validate/cuda_driver.h: the CUDA driver API, loaded with dlopen at
 * run time, so that dlpack-validate and its plugins build and run on machines without CUDA.
 * C99 and C++17; no CUDA header is needed. Only the calls the validator uses are declared;
 * constants are the driver API's documented values.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef DLPACK_VALIDATE_CUDA_DRIVER_H_
#define DLPACK_VALIDATE_CUDA_DRIVER_H_

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int dlpv_CUresult; /* 0 = CUDA_SUCCESS */
typedef int dlpv_CUdevice;
typedef unsigned long long dlpv_CUdeviceptr;
typedef void* dlpv_CUcontext;
typedef void* dlpv_CUstream;
typedef void* dlpv_CUevent;
typedef void* dlpv_CUmodule;
typedef void* dlpv_CUfunction;

#define DLPV_CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define DLPV_CU_POINTER_ATTRIBUTE_IS_MANAGED 8
#define DLPV_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define DLPV_CU_MEMORYTYPE_HOST 1
#define DLPV_CU_MEMORYTYPE_DEVICE 2
#define DLPV_CU_MEMORYTYPE_UNIFIED 4
#define DLPV_CU_MEM_ATTACH_GLOBAL 1
#define DLPV_CU_STREAM_NON_BLOCKING 1
#define DLPV_CUDA_ERROR_NOT_READY 600

typedef struct DLPVCuda {
  void* handle;
  dlpv_CUresult (*cuInit)(unsigned int flags);
  dlpv_CUresult (*cuDeviceGetCount)(int* count);
  dlpv_CUresult (*cuDeviceGet)(dlpv_CUdevice* device, int ordinal);
  dlpv_CUresult (*cuDevicePrimaryCtxRetain)(dlpv_CUcontext* ctx, dlpv_CUdevice dev);
  dlpv_CUresult (*cuCtxSetCurrent)(dlpv_CUcontext ctx);
  dlpv_CUresult (*cuCtxSynchronize)(void);
  dlpv_CUresult (*cuMemAlloc)(dlpv_CUdeviceptr* ptr, size_t bytes);
  dlpv_CUresult (*cuMemFree)(dlpv_CUdeviceptr ptr);
  dlpv_CUresult (*cuMemAllocHost)(void** ptr, size_t bytes);
  dlpv_CUresult (*cuMemFreeHost)(void* ptr);
  dlpv_CUresult (*cuMemAllocManaged)(dlpv_CUdeviceptr* ptr, size_t bytes, unsigned int flags);
  dlpv_CUresult (*cuMemcpyDtoH)(void* dst, dlpv_CUdeviceptr src, size_t bytes);
  dlpv_CUresult (*cuMemcpyHtoD)(dlpv_CUdeviceptr dst, const void* src, size_t bytes);
  dlpv_CUresult (*cuMemcpyDtoHAsync)(void* dst, dlpv_CUdeviceptr src, size_t bytes, dlpv_CUstream s);
  dlpv_CUresult (*cuMemcpyHtoDAsync)(dlpv_CUdeviceptr dst, const void* src, size_t bytes, dlpv_CUstream s);
  dlpv_CUresult (*cuMemsetD8)(dlpv_CUdeviceptr dst, unsigned char value, size_t n);
  dlpv_CUresult (*cuPointerGetAttribute)(void* data, int attribute, dlpv_CUdeviceptr ptr);
  dlpv_CUresult (*cuStreamCreate)(dlpv_CUstream* stream, unsigned int flags);
  dlpv_CUresult (*cuStreamDestroy)(dlpv_CUstream stream);
  dlpv_CUresult (*cuStreamSynchronize)(dlpv_CUstream stream);
  dlpv_CUresult (*cuStreamWaitEvent)(dlpv_CUstream stream, dlpv_CUevent event, unsigned int flags);
  dlpv_CUresult (*cuEventCreate)(dlpv_CUevent* event, unsigned int flags);
  dlpv_CUresult (*cuEventRecord)(dlpv_CUevent event, dlpv_CUstream stream);
  dlpv_CUresult (*cuEventQuery)(dlpv_CUevent event);
  dlpv_CUresult (*cuEventDestroy)(dlpv_CUevent event);
  dlpv_CUresult (*cuModuleLoadData)(dlpv_CUmodule* module, const void* image);
  dlpv_CUresult (*cuModuleGetFunction)(dlpv_CUfunction* fn, dlpv_CUmodule module, const char* name);
  dlpv_CUresult (*cuLaunchKernel)(dlpv_CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  dlpv_CUstream stream, void** params, void** extra);
  dlpv_CUresult (*cuGetErrorString)(dlpv_CUresult error, const char** text);
} DLPVCuda;

/* Load libcuda.so.1 and resolve every entry point. Returns 1 on success; on failure fills
 * `why` (one line) and returns 0. Does not call cuInit. */
static inline int dlpv_cuda_load(DLPVCuda* cu, char* why, size_t why_size) {
  struct Entry { const char* name; void** slot; };
  size_t i;
  const char* err;
  cu->handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu->handle) {
    err = dlerror();
    snprintf(why, why_size, "no CUDA driver (%s)", err ? err : "libcuda.so.1 not found");
    return 0;
  }
  {
    /* _v2 names are the 64-bit entry points every driver since CUDA 3.2 exports. */
    struct Entry entries[] = {
        {"cuInit", (void**)&cu->cuInit},
        {"cuDeviceGetCount", (void**)&cu->cuDeviceGetCount},
        {"cuDeviceGet", (void**)&cu->cuDeviceGet},
        {"cuDevicePrimaryCtxRetain", (void**)&cu->cuDevicePrimaryCtxRetain},
        {"cuCtxSetCurrent", (void**)&cu->cuCtxSetCurrent},
        {"cuCtxSynchronize", (void**)&cu->cuCtxSynchronize},
        {"cuMemAlloc_v2", (void**)&cu->cuMemAlloc},
        {"cuMemFree_v2", (void**)&cu->cuMemFree},
        {"cuMemAllocHost_v2", (void**)&cu->cuMemAllocHost},
        {"cuMemFreeHost", (void**)&cu->cuMemFreeHost},
        {"cuMemAllocManaged", (void**)&cu->cuMemAllocManaged},
        {"cuMemcpyDtoH_v2", (void**)&cu->cuMemcpyDtoH},
        {"cuMemcpyHtoD_v2", (void**)&cu->cuMemcpyHtoD},
        {"cuMemcpyDtoHAsync_v2", (void**)&cu->cuMemcpyDtoHAsync},
        {"cuMemcpyHtoDAsync_v2", (void**)&cu->cuMemcpyHtoDAsync},
        {"cuMemsetD8_v2", (void**)&cu->cuMemsetD8},
        {"cuPointerGetAttribute", (void**)&cu->cuPointerGetAttribute},
        {"cuStreamCreate", (void**)&cu->cuStreamCreate},
        {"cuStreamDestroy_v2", (void**)&cu->cuStreamDestroy},
        {"cuStreamSynchronize", (void**)&cu->cuStreamSynchronize},
        {"cuStreamWaitEvent", (void**)&cu->cuStreamWaitEvent},
        {"cuEventCreate", (void**)&cu->cuEventCreate},
        {"cuEventRecord", (void**)&cu->cuEventRecord},
        {"cuEventQuery", (void**)&cu->cuEventQuery},
        {"cuEventDestroy_v2", (void**)&cu->cuEventDestroy},
        {"cuModuleLoadData", (void**)&cu->cuModuleLoadData},
        {"cuModuleGetFunction", (void**)&cu->cuModuleGetFunction},
        {"cuLaunchKernel", (void**)&cu->cuLaunchKernel},
        {"cuGetErrorString", (void**)&cu->cuGetErrorString},
    };
    for (i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
      *entries[i].slot = dlsym(cu->handle, entries[i].name);
      if (!*entries[i].slot) {
        snprintf(why, why_size, "CUDA driver lacks %s", entries[i].name);
        return 0;
      }
    }
  }
  return 1;
}

/* A kernel that spins for `cycles` clock ticks, then stores `value` into n 32-bit words at
 * dst: the slow producer of the stream cases. PTX 7.0 for sm_52 and up (JIT-compiled by the
 * driver for the device at hand). Entry: dlpv_delay_fill(u64 dst, u32 value, u64 n, u64 cycles). */
static const char dlpv_delay_fill_ptx[] =
    ".version 7.0\n"
    ".target sm_52\n"
    ".address_size 64\n"
    ".visible .entry dlpv_delay_fill(.param .u64 p_dst, .param .u32 p_value, .param .u64 p_n,\n"
    "                                 .param .u64 p_cycles)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [p_dst];\n"
    "  ld.param.u32 %r1, [p_value];\n"
    "  ld.param.u64 %rd2, [p_n];\n"
    "  ld.param.u64 %rd3, [p_cycles];\n"
    "  mov.u64 %rd4, %clock64;\n"
    "SPIN:\n"
    "  mov.u64 %rd5, %clock64;\n"
    "  sub.u64 %rd6, %rd5, %rd4;\n"
    "  setp.lt.u64 %p1, %rd6, %rd3;\n"
    "  @%p1 bra SPIN;\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mul.wide.u32 %rd7, %r2, %r3;\n"
    "  cvt.u64.u32 %rd8, %r4;\n"
    "  add.u64 %rd7, %rd7, %rd8;\n"
    "  setp.ge.u64 %p2, %rd7, %rd2;\n"
    "  @%p2 bra DONE;\n"
    "  shl.b64 %rd9, %rd7, 2;\n"
    "  add.u64 %rd10, %rd1, %rd9;\n"
    "  st.global.u32 [%rd10], %r1;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_VALIDATE_CUDA_DRIVER_H_ */
