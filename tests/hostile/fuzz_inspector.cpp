// tests/hostile/fuzz_inspector.cpp: libFuzzer target over the inspector's field validation
// (inspect_tensor and gather_elements). Every DLTensor field comes from the input: ndim,
// dtype, device, byte_offset, and the data / shape / strides pointers, which may be NULL,
// point into input bytes (at any offset, in or out of bounds), into an unmapped page, at a
// misaligned address, or be arbitrary 64-bit values. The inspector must never crash, read
// out of bounds of its own buffers, overflow, or allocate without bound (run with
// -malloc_limit_mb to enforce the last one).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/tensor.hpp>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <iterator>
#include <cstring>
#include <vector>

namespace {

const DLDataType kWantDtypes[] = {
    {kDLFloat, 32, 1}, {kDLInt, 64, 1}, {kDLUInt, 8, 1},  {kDLFloat, 16, 1},
    {DLPV_CODE_BOOL, 8, 1}, {kDLComplex, 64, 1}, {kDLFloat, 64, 1}, {DLPV_CODE_FLOAT4_E2M1FN, 4, 1}};

void* dead_page() {
  static void* page = [] {
    const long ps = sysconf(_SC_PAGESIZE);
    void* p = mmap(nullptr, static_cast<size_t>(ps), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }();
  return page;
}

/// A pointer of the input's choosing, relative to `base` (n bytes the fuzzer owns).
void* pick_pointer(FuzzedDataProvider& in, uint8_t* base, size_t n) {
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: return nullptr;
    case 1: return base;
    case 2: return base + in.ConsumeIntegralInRange<size_t>(0, n);  // up to one past the end
    case 3: return static_cast<char*>(dead_page()) + in.ConsumeIntegralInRange<int>(0, 4095);
    case 4: return reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
    case 5: return base + in.ConsumeIntegralInRange<int64_t>(-4096, 4096);
    default: return reinterpret_cast<void*>(uintptr_t{1} + in.ConsumeIntegralInRange<uintptr_t>(0, 64));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  DLTensor t{};
  t.ndim = in.ConsumeBool() ? in.ConsumeIntegralInRange<int32_t>(-2, 40) : in.ConsumeIntegral<int32_t>();
  t.dtype.code = in.ConsumeIntegral<uint8_t>();
  t.dtype.bits = in.ConsumeIntegral<uint8_t>();
  t.dtype.lanes = in.ConsumeIntegral<uint16_t>();
  const int32_t device_type = in.ConsumeBool() ? 1 : in.ConsumeIntegral<int32_t>();
  std::memcpy(&t.device.device_type, &device_type, sizeof device_type);  // any int32, as a C library may
  t.device.device_id = in.ConsumeBool() ? 0 : in.ConsumeIntegral<int32_t>();
  t.byte_offset = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, 64) : in.ConsumeIntegral<uint64_t>();

  // shape and strides: up to 40 int64 values each, taken from the input
  auto int64s = [&](std::vector<int64_t>& v) {
    const size_t count = in.ConsumeIntegralInRange<size_t>(0, 40);
    for (size_t i = 0; i < count; ++i)
      v.push_back(in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-3, 8) : in.ConsumeIntegral<int64_t>());
  };
  std::vector<int64_t> shape, strides;
  int64s(shape);
  int64s(strides);
  const int shape_kind = in.ConsumeIntegralInRange<int>(0, 3);
  const int strides_kind = in.ConsumeIntegralInRange<int>(0, 3);
  const bool use_want_dtype = in.ConsumeBool();
  const DLDataType want_dtype = kWantDtypes[in.ConsumeIntegralInRange<size_t>(0, std::size(kWantDtypes) - 1)];
  const uint32_t layout = in.ConsumeIntegralInRange<uint32_t>(0, 5);
  const bool versioned = in.ConsumeBool();
  const DLPackVersion version{in.ConsumeIntegralInRange<uint32_t>(0, 2), in.ConsumeIntegralInRange<uint32_t>(0, 5)};
  const bool want_matches = in.ConsumeBool();
  const int data_choice = in.ConsumeIntegralInRange<int>(0, 6);

  // The rest of the input is the data buffer.
  std::vector<uint8_t> payload = in.ConsumeRemainingBytes<uint8_t>();
  payload.resize(payload.size() + 8);  // never empty, so base is a real heap pointer
  FuzzedDataProvider ptrs(payload.data(), payload.size());

  auto place = [&](std::vector<int64_t>& v, int kind) -> int64_t* {
    switch (kind) {
      case 0: return v.data();  // may hold fewer than ndim entries: the read must not trust ndim
      case 1: return nullptr;
      case 2: return reinterpret_cast<int64_t*>(static_cast<char*>(dead_page()) + 8);
      default: return v.empty() ? nullptr : reinterpret_cast<int64_t*>(reinterpret_cast<char*>(v.data()) + 1);
    }
  };
  t.shape = place(shape, shape_kind);
  t.strides = place(strides, strides_kind);
  (void)data_choice;
  t.data = pick_pointer(ptrs, payload.data(), payload.size());
  if (use_want_dtype) t.dtype = want_dtype;

  // What the validator "asked for": sane by construction (the validator makes it), and
  // often equal to the tensor's own shape so that inspection goes all the way to the data.
  dlpv::TensorExpectation want;
  want.dtype = want_dtype;
  want.layout = layout;
  if (want_matches && shape_kind == 0 && t.ndim >= 0 && static_cast<size_t>(t.ndim) <= shape.size() &&
      t.ndim <= 8) {
    bool small = true;
    for (int32_t i = 0; i < t.ndim; ++i) small = small && shape[static_cast<size_t>(i)] >= 0 && shape[static_cast<size_t>(i)] <= 16;
    if (small) want.shape.assign(shape.begin(), shape.begin() + t.ndim);
  } else {
    want.shape = {3, 4};
  }
  dlpv::InspectOptions opt;
  opt.versioned = versioned;
  opt.version = version;
  std::vector<dlpv::Finding> findings;
  dlpv::inspect_tensor(t, want, opt, findings);

  std::vector<uint8_t> got;
  std::string why;
  if (dlpv::gather_elements(t, got, why) && !got.empty()) {
    // What came back must be a real, fully owned buffer.
    volatile uint8_t sink = 0;
    for (uint8_t b : got) sink = static_cast<uint8_t>(sink ^ b);
    (void)sink;
  }
  return 0;
}
