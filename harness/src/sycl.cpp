// harness/src/sycl.cpp: the harness's SYCL access over dpctl's dlopen'd C interface.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/sycl.hpp>
#include <dlpack_validate/sycl_interface.h>

#include <mutex>

namespace dlpv::sycl {
namespace {

std::mutex g_mutex;
DLPVSycl g_api{};
bool g_ok = false;

// The loaded interface, loading it on first success (under g_mutex).
const DLPVSycl* api(std::string* why) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_ok) return &g_api;
  char text[512] = {};
  DLPVSycl s{};
  if (!dlpv_sycl_load(&s, text, sizeof text)) {
    if (why) *why = text;
    return nullptr;
  }
  g_api = s;
  g_ok = true;
  return &g_api;
}

}  // namespace

bool available(std::string* why) { return api(why) != nullptr; }

int pointer_type(const void* p) {
  const DLPVSycl* s = api(nullptr);
  return s ? s->DPCTLUSM_GetPointerType(p, s->context) : DLPV_SYCL_USM_UNKNOWN;
}

const char* pointer_type_name(int type) {
  switch (type) {
    case DLPV_SYCL_USM_DEVICE: return "USM device memory";
    case DLPV_SYCL_USM_SHARED: return "USM shared memory";
    case DLPV_SYCL_USM_HOST: return "USM host memory";
    default: return "not USM (plain host memory)";
  }
}

bool copy_to_host(const void* src, void* dst, size_t n) {
  const DLPVSycl* s = api(nullptr);
  return s && dlpv_sycl_copy(s, dst, src, n);
}

}  // namespace dlpv::sycl
