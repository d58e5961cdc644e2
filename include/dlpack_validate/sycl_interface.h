/* include/dlpack_validate/sycl_interface.h: a SYCL runtime for kDLOneAPI memory, reached
 * through dpctl's C interface (libDPCTLSyclInterface.so, shipped in the dpctl wheel) with dlopen
 * at run time, so that dlpack-validate and its plugins build and run on machines without it.
 * C99 and C++17; no SYCL or dpctl header is needed. Only the calls the validator uses are
 * declared, with the signatures of dpctl's syclinterface headers (opaque references are void*).
 *
 * Where the library comes from: the path in DLPV_SYCL_INTERFACE, else the copy already loaded
 * in this process (a Python worker that imported dpctl). The runtime it needs (libsycl, the
 * OpenCL loader and a device: for the oneAPI peer, its venv's lib/ on LD_LIBRARY_PATH,
 * OCL_ICD_FILENAMES and ONEAPI_DEVICE_SELECTOR, as bin/python-oneapi sets) is the caller's.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef DLPACK_VALIDATE_SYCL_INTERFACE_H_
#define DLPACK_VALIDATE_SYCL_INTERFACE_H_

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DPCTLSyclUSMType: what kind of USM allocation a pointer is in a context. */
#define DLPV_SYCL_USM_UNKNOWN 0 /* not a USM allocation of that context: plain host memory */
#define DLPV_SYCL_USM_DEVICE 1
#define DLPV_SYCL_USM_SHARED 2
#define DLPV_SYCL_USM_HOST 3

typedef struct DLPVSycl {
  void* handle;
  void* queue;   /* a queue on the default device (its platform's default context) */
  void* context; /* that queue's context: the one dpctl's own queues share */
  void* (*DPCTLDefaultSelector_Create)(void);
  void (*DPCTLDeviceSelector_Delete)(void* selector);
  void* (*DPCTLDevice_CreateFromSelector)(const void* selector);
  void (*DPCTLDevice_Delete)(void* device);
  void* (*DPCTLQueue_CreateForDevice)(const void* device, void* error_handler, int properties);
  void* (*DPCTLQueue_GetContext)(const void* queue);
  void* (*DPCTLmalloc_device)(size_t size, const void* queue);
  void (*DPCTLfree_with_queue)(void* usm, const void* queue);
  void* (*DPCTLQueue_Memcpy)(const void* queue, void* dst, const void* src, size_t count);
  void (*DPCTLEvent_Wait)(void* event);
  void (*DPCTLEvent_Delete)(void* event);
  int (*DPCTLUSM_GetPointerType)(const void* usm, const void* context);
} DLPVSycl;

/* Load the interface, resolve every entry point and make a queue on the default device.
 * Returns 1 on success; on failure fills `why` (one line) and returns 0. */
static inline int dlpv_sycl_load(DLPVSycl* s, char* why, size_t why_size) {
  struct Entry { const char* name; void** slot; };
  const char* path = getenv("DLPV_SYCL_INTERFACE");
  const char* err;
  size_t i;
  void* selector;
  void* device;
  if (path && *path) {
    s->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  } else {
    s->handle = dlopen("libDPCTLSyclInterface.so", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    path = "libDPCTLSyclInterface.so";
  }
  if (!s->handle) {
    err = dlerror();
    if (getenv("DLPV_SYCL_INTERFACE") && *getenv("DLPV_SYCL_INTERFACE"))
      snprintf(why, why_size, "no SYCL runtime: DLPV_SYCL_INTERFACE=%s cannot be loaded (%s)", path,
               err ? err : "dlopen failed");
    else
      snprintf(why, why_size, "no SYCL runtime (set DLPV_SYCL_INTERFACE to dpctl's libDPCTLSyclInterface.so)");
    return 0;
  }
  {
    struct Entry entries[] = {
        {"DPCTLDefaultSelector_Create", (void**)&s->DPCTLDefaultSelector_Create},
        {"DPCTLDeviceSelector_Delete", (void**)&s->DPCTLDeviceSelector_Delete},
        {"DPCTLDevice_CreateFromSelector", (void**)&s->DPCTLDevice_CreateFromSelector},
        {"DPCTLDevice_Delete", (void**)&s->DPCTLDevice_Delete},
        {"DPCTLQueue_CreateForDevice", (void**)&s->DPCTLQueue_CreateForDevice},
        {"DPCTLQueue_GetContext", (void**)&s->DPCTLQueue_GetContext},
        {"DPCTLmalloc_device", (void**)&s->DPCTLmalloc_device},
        {"DPCTLfree_with_queue", (void**)&s->DPCTLfree_with_queue},
        {"DPCTLQueue_Memcpy", (void**)&s->DPCTLQueue_Memcpy},
        {"DPCTLEvent_Wait", (void**)&s->DPCTLEvent_Wait},
        {"DPCTLEvent_Delete", (void**)&s->DPCTLEvent_Delete},
        {"DPCTLUSM_GetPointerType", (void**)&s->DPCTLUSM_GetPointerType},
    };
    for (i = 0; i < sizeof entries / sizeof entries[0]; ++i) {
      *entries[i].slot = dlsym(s->handle, entries[i].name);
      if (!*entries[i].slot) {
        snprintf(why, why_size, "no SYCL runtime: %s has no %s", path, entries[i].name);
        return 0;
      }
    }
  }
  selector = s->DPCTLDefaultSelector_Create();
  device = selector ? s->DPCTLDevice_CreateFromSelector(selector) : NULL;
  s->queue = device ? s->DPCTLQueue_CreateForDevice(device, NULL, 0) : NULL;
  if (device) s->DPCTLDevice_Delete(device);
  if (selector) s->DPCTLDeviceSelector_Delete(selector);
  if (!s->queue) {
    snprintf(why, why_size,
             "no SYCL device: the runtime behind %s found none (for Intel's OpenCL CPU runtime: its lib/ on "
             "LD_LIBRARY_PATH, OCL_ICD_FILENAMES, ONEAPI_DEVICE_SELECTOR=opencl:cpu)",
             path);
    return 0;
  }
  s->context = s->DPCTLQueue_GetContext(s->queue);
  return 1;
}

/* Copy n bytes between USM and host memory on the queue, waiting for the copy. 1 on success. */
static inline int dlpv_sycl_copy(const DLPVSycl* s, void* dst, const void* src, size_t n) {
  void* event = s->DPCTLQueue_Memcpy(s->queue, dst, src, n);
  if (!event) return 0;
  s->DPCTLEvent_Wait(event);
  s->DPCTLEvent_Delete(event);
  return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* DLPACK_VALIDATE_SYCL_INTERFACE_H_ */
