// harness/src/names.cpp: names and small facts about dtypes, devices and layouts
// (values from the DLPack specification, checklist §1.3/§1.4).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/tensor.hpp>
#include <fmt/format.h>

#include <cstring>

namespace dlpv {
namespace {

struct DtypeName {
  const char* name;
  uint8_t code;
  uint8_t bits;
};

// Every (code, bits) pair DLPack 1.3 defines, with the name reports use.
constexpr DtypeName kDtypes[] = {
    {"int8", 0, 8},           {"int16", 0, 16},         {"int32", 0, 32},
    {"int64", 0, 64},         {"uint8", 1, 8},          {"uint16", 1, 16},
    {"uint32", 1, 32},        {"uint64", 1, 64},        {"float16", 2, 16},
    {"float32", 2, 32},       {"float64", 2, 64},       {"bfloat16", 4, 16},
    {"complex64", 5, 64},     {"complex128", 5, 128},   {"bool", 6, 8},
    {"float8_e3m4", 7, 8},    {"float8_e4m3", 8, 8},    {"float8_e4m3b11fnuz", 9, 8},
    {"float8_e4m3fn", 10, 8}, {"float8_e4m3fnuz", 11, 8}, {"float8_e5m2", 12, 8},
    {"float8_e5m2fnuz", 13, 8}, {"float8_e8m0fnu", 14, 8}, {"float6_e2m3fn", 15, 6},
    {"float6_e3m2fn", 16, 6}, {"float4_e2m1fn", 17, 4},
    {"bcomplex32", 18, 32},  // provisional: DLPack main after 1.3 (checklist §1.4)
};

constexpr const char* kLayouts[] = {"contiguous", "fortran", "strided",
                                    "offset",     "reversed", "broadcast"};
}  // namespace

std::string dtype_name(DLDataType t) {
  for (const auto& d : kDtypes) {
    if (d.code == t.code && d.bits == t.bits) {
      if (t.lanes == 1) return d.name;
      return fmt::format("{}x{}", d.name, t.lanes);
    }
  }
  return fmt::format("({},{},{})", t.code, t.bits, t.lanes);
}

std::optional<DLDataType> dtype_from_name(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return DLDataType{d.code, d.bits, 1};
  return std::nullopt;
}

bool dtype_equal(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

EnumStanding dtype_code_standing(uint8_t code) {
  if (code <= DLPV_CODE_LAST) return EnumStanding::defined;
  if (code == DLPV_CODE_BCOMPLEX) return EnumStanding::provisional;
  return EnumStanding::unknown;
}

EnumStanding device_type_standing(int32_t device_type) {
  if (device_type <= 0 || device_type == 5 || device_type == 6) return EnumStanding::invalid;
  if (device_type <= DLPV_DEV_TRN) return EnumStanding::defined;
  if (device_type <= 21) return EnumStanding::provisional;  // kDLTPU, kDLTPUHost, kDLAscend
  return EnumStanding::unknown;
}

Severity unknown_enum_severity(EnumStanding standing, bool versioned, DLPackVersion declared) {
  switch (standing) {
    case EnumStanding::defined: return Severity::may;
    case EnumStanding::invalid: return Severity::must;
    case EnumStanding::provisional: return Severity::should;
    case EnumStanding::unknown:
      // Only a tensor that declares a version the validator knows (1.0 .. 1.3) is bound to
      // that version's enum ranges; legacy tensors and newer minors may carry newer values.
      return versioned && declared.major == 1 && declared.minor <= DLPV_DLPACK_MINOR ? Severity::must
                                                                                     : Severity::should;
  }
  return Severity::must;
}

std::string device_name(DLDevice d) {
  const char* names[] = {nullptr,  "cpu",    "cuda",  "cuda_host", "opencl", nullptr,
                         nullptr,  "vulkan", "metal", "vpi",       "rocm",   "rocm_host",
                         "ext_dev", "cuda_managed", "oneapi", "webgpu", "hexagon", "maia",
                         "trn",     "tpu",    "tpu_host", "ascend"};
  int t = static_cast<int>(d.device_type);
  if (t >= 0 && t <= 21 && names[t]) return fmt::format("{}:{}", names[t], d.device_id);
  return fmt::format("device_type {}:{}", t, d.device_id);
}

const char* layout_name(uint32_t layout) {
  return layout < 6 ? kLayouts[layout] : "unknown";
}

std::optional<uint32_t> layout_from_name(const std::string& name) {
  for (uint32_t i = 0; i < 6; ++i)
    if (name == kLayouts[i]) return i;
  return std::nullopt;
}

size_t element_bytes(DLDataType t) {
  if (t.bits % 8 != 0) return 0;
  return static_cast<size_t>(t.bits / 8) * (t.lanes ? t.lanes : 1u);
}

std::string shape_text(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format(i ? ", {}" : "{}", v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string shape_text(const int64_t* v, int32_t n) {
  if (!v) return n == 0 ? "() (shape pointer NULL, allowed for ndim 0)" : "NULL";
  std::string s = "(";
  for (int32_t i = 0; i < n; ++i) {
    int64_t x = 0;
    if (!safe_read(v + i, &x, sizeof x)) return s + "<unreadable>)";
    s += fmt::format(i ? ", {}" : "{}", x);
  }
  return s + (n == 1 ? ",)" : ")");
}

bool wants_an(const std::string& phrase) {
  if (phrase.empty()) return false;
  const auto starts = [&](const char* w) { return phrase.rfind(w, 0) == 0; };
  const char c = phrase[0];
  if (c == '8' || starts("11") || starts("18")) return true;  // eight, eleven, eighteen
  if (c == 'a' || c == 'e' || c == 'i' || c == 'A' || c == 'E' || c == 'I' || c == 'O') return true;
  if (c == 'o') return !starts("one");  // "a ones array" (one is spoken "won")
  // "u" as in "uint8", "unit", "usm", "use" is spoken "you": "a"; otherwise ("unaligned") "an".
  if (c == 'u') return !(starts("uint") || starts("uni") || starts("us") || starts("ut"));
  return false;
}

std::string with_article(const std::string& phrase) { return (wants_an(phrase) ? "an " : "a ") + phrase; }

std::string hex_bytes(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::string s;
  for (size_t i = 0; i < n; ++i) s += fmt::format(i ? " {:02x}" : "{:02x}", b[i]);
  return s;
}

}  // namespace dlpv
