// harness/src/inspector.cpp: defensive reading of any DLTensor (docs/design.md §5). Every field is
// validated, and the span of memory the strides address is computed with overflow checks,
// before a single data byte is read; reads go through safe_read so a garbage pointer from
// the library becomes a finding rather than a crash of the worker.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <dlpack_validate/sycl.hpp>
#include <dlpack_validate/case.hpp>
#include <dlpack_validate/tensor.hpp>
#include <fmt/format.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace dlpv {

// ---- safe_read -------------------------------------------------------------------------

namespace {
// Fallback when process_vm_readv is unavailable (seccomp): the kernel copies through a pipe
// and reports EFAULT instead of delivering SIGSEGV.
bool pipe_read(const void* addr, void* dst, size_t n) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  bool ok = true;
  auto* out = static_cast<char*>(dst);
  const auto* in = static_cast<const char*>(addr);
  while (n > 0 && ok) {
    size_t chunk = n < 4096 ? n : 4096;
    ssize_t w = write(fds[1], in, chunk);
    if (w <= 0) { ok = false; break; }
    ssize_t r = read(fds[0], out, static_cast<size_t>(w));
    if (r != w) { ok = false; break; }
    in += w; out += w; n -= static_cast<size_t>(w);
  }
  close(fds[0]);
  close(fds[1]);
  return ok;
}
}  // namespace

bool safe_read(const void* addr, void* dst, size_t n) {
  if (n == 0) return true;
  if (!addr) return false;
  static bool vm_readv_works = true;
  if (vm_readv_works) {
    iovec local{dst, n};
    iovec remote{const_cast<void*>(addr), n};
    ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got == static_cast<ssize_t>(n)) return true;
    if (got >= 0 || errno == EFAULT) return false;
    vm_readv_works = false;  // ENOSYS / EPERM: use the pipe from now on
  }
  return pipe_read(addr, dst, n);
}

// ---- layouts and expected bytes --------------------------------------------------------

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
// acc * extent (extents < 1 count as 1), saturating: the shape may be the library's garbage.
int64_t grow(int64_t acc, int64_t extent) {
  int64_t r;
  return __builtin_mul_overflow(acc, extent > 0 ? extent : 1, &r) ? INT64_MAX : r;
}
}  // namespace

std::vector<int64_t> canonical_strides(uint32_t layout, const std::vector<int64_t>& shape) {
  const size_t nd = shape.size();
  std::vector<int64_t> st(nd, 1);
  if (nd == 0) return st;
  switch (layout) {
    case DLPV_LAYOUT_FORTRAN: {
      int64_t acc = 1;
      for (size_t i = 0; i < nd; ++i) { st[i] = acc; acc = grow(acc, shape[i]); }
      return st;
    }
    case DLPV_LAYOUT_STRIDED: {  // every 2nd element along the last axis of a 2x wider array
      int64_t acc = 2;
      for (size_t i = nd; i-- > 0;) { st[i] = acc; acc = grow(acc, shape[i]); }
      return st;
    }
    default: {
      int64_t acc = 1;
      for (size_t i = nd; i-- > 0;) { st[i] = acc; acc = grow(acc, shape[i]); }
      if (layout == DLPV_LAYOUT_REVERSED) st[0] = -st[0];
      if (layout == DLPV_LAYOUT_BROADCAST) st[0] = 0;
      return st;
    }
  }
}

// The periods come from plugin.h's formulas: the small numbers take i mod 101 (integers), 11
// (bool), 7 (e8m0), 15 (the other small floats' table) or 61 (floats; the imaginary part too);
// the edge pattern cycles its tables (11 entries; the imaginary part the same table, shifted).
// tests/unit/test_pattern.cpp checks every code and width against the element-wise fill.
int64_t pattern_period(DLDataType dtype, int values) {
  if (dtype.lanes != 1 || dtype.bits % 8u != 0) return 0;
  if (values == DLPV_VALUES_EDGE && dlpv_pattern_has_edge(dtype)) {
    switch (dtype.code) {
      case DLPV_CODE_INT:
      case DLPV_CODE_UINT: return DLPV__EDGE_INTS;
      case DLPV_CODE_BOOL: return 11;
      case DLPV_CODE_FLOAT:
      case DLPV_CODE_BFLOAT:
      case DLPV_CODE_COMPLEX: return DLPV__EDGE_FLOATS;
      default: return 0;
    }
  }
  switch (dtype.code) {
    case DLPV_CODE_INT:
    case DLPV_CODE_UINT: return 101;
    case DLPV_CODE_BOOL: return 11;
    case DLPV_CODE_FLOAT8_E8M0FNU: return 7;
    case DLPV_CODE_FLOAT:
    case DLPV_CODE_BFLOAT:
    case DLPV_CODE_COMPLEX:
    case DLPV_CODE_BCOMPLEX: return 61;
    default: return dlpv__is_minifloat(dtype.code) ? 15 : 0;
  }
}

size_t pattern_fill(DLDataType dtype, int64_t n, void* dst, int values) {
  const int64_t period = pattern_period(dtype, values);
  if (period <= 0 || n <= 2 * period) return dlpv_pattern_fill_values(dtype, n, dst, values);
  const size_t total = dlpv_pattern_nbytes(dtype, n);
  auto* out = static_cast<unsigned char*>(dst);
  size_t have = dlpv_pattern_fill_values(dtype, period, out, values);  // one period, then doubling
  while (have < total) {
    const size_t more = std::min(have, total - have);
    std::memcpy(out + have, out, more);
    have += more;
  }
  return total;
}

std::vector<uint8_t> expected_bytes(DLDataType dtype, const std::vector<int64_t>& shape,
                                    uint32_t layout, int values) {
  const int64_t n = element_count(shape);
  if (n <= 0) return {};
  if (layout != DLPV_LAYOUT_BROADCAST || shape.empty()) {
    std::vector<uint8_t> out(dlpv_pattern_nbytes(dtype, n));
    pattern_fill(dtype, n, out.data(), values);
    return out;
  }
  // Broadcast: every row along axis 0 holds the pattern of shape[1:].
  const int64_t row = n / shape[0];
  std::vector<uint8_t> one(dlpv_pattern_nbytes(dtype, row));
  pattern_fill(dtype, row, one.data(), values);
  std::vector<uint8_t> out;
  out.reserve(one.size() * static_cast<size_t>(shape[0]));
  for (int64_t r = 0; r < shape[0]; ++r) out.insert(out.end(), one.begin(), one.end());
  return out;
}

// ---- gathering -------------------------------------------------------------------------

namespace {
// Bounds on what the inspector will read for one tensor: the validator's own tensors are tiny,
// and a garbage field must not make it allocate or copy gigabytes.
constexpr uint64_t kMaxGatherBytes = uint64_t{256} << 20;  // the compact copy it returns
constexpr uint64_t kMaxWindowBytes = uint64_t{64} << 20;   // one read of the addressed span
constexpr int64_t kMaxElementReads = int64_t{1} << 16;     // element-wise reads of a sparse span
}  // namespace

// Data bytes live where the device says: CUDA device and managed memory is copied through the
// driver; everything else is host memory read with safe_read. (shape/strides are host memory
// for every device.)
bool read_data(const DLTensor& t, const void* addr, void* dst, size_t n) {
  const int dt = static_cast<int>(t.device.device_type);
  if (dt == kDLCUDA || dt == kDLCUDAManaged)
    return cuda::use_device(t.device.device_id) && cuda::copy_to_host(addr, dst, n);
  if (dt == DLPV_DEV_ONEAPI) return sycl::copy_to_host(addr, dst, n);  // USM, through the SYCL runtime
  return safe_read(addr, dst, n);
}

namespace {
// The elements of a local copy of the addressed span, in C order, into `out`: the last axis as an
// inner loop of copies of a size fixed at compile time (a call to memcpy per element was most of
// the time a 1 Mi-element tensor's read took). `origin`: element 0's place in the window, in
// elements; every offset stays within the window by the span's construction.
template <size_t E>
void gather_fixed(const uint8_t* window, int64_t origin, const std::vector<int64_t>& shape,
                  const std::vector<int64_t>& strides, size_t es, uint8_t* out) {
  const size_t e = E ? E : es;
  const size_t nd = shape.size();
  const int64_t inner = nd ? shape[nd - 1] : 1;
  const int64_t step = (nd ? strides[nd - 1] : 0) * static_cast<int64_t>(e);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> idx(nd, 0);
  for (int64_t outer = n / inner; outer-- > 0;) {
    int64_t off = origin;
    for (size_t i = 0; i + 1 < nd; ++i) off += idx[i] * strides[i];
    const uint8_t* p = window + off * static_cast<int64_t>(e);
    if (step == static_cast<int64_t>(e)) {
      std::memcpy(out, p, static_cast<size_t>(inner) * e);
      out += static_cast<size_t>(inner) * e;
    } else {
      for (int64_t j = 0; j < inner; ++j, p += step, out += e) std::memcpy(out, p, e);
    }
    for (size_t i = nd > 0 ? nd - 1 : 0; i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

void gather_window(const uint8_t* window, int64_t origin, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& strides, size_t es, uint8_t* out) {
  switch (es) {
    case 1: return gather_fixed<1>(window, origin, shape, strides, es, out);
    case 2: return gather_fixed<2>(window, origin, shape, strides, es, out);
    case 4: return gather_fixed<4>(window, origin, shape, strides, es, out);
    case 8: return gather_fixed<8>(window, origin, shape, strides, es, out);
    case 16: return gather_fixed<16>(window, origin, shape, strides, es, out);
    default: return gather_fixed<0>(window, origin, shape, strides, es, out);
  }
}
}  // namespace

bool gather_elements(const DLTensor& tensor, std::vector<uint8_t>& out, std::string& why, bool padded_subbyte) {
  out.clear();
  // The struct lives in the library's memory: work on a copy read without trusting it.
  DLTensor t{};
  if (!safe_read(&tensor, &t, sizeof t)) { why = "the DLTensor struct is unreadable"; return false; }
  if (t.ndim < 0 || t.ndim > 1024) { why = fmt::format("ndim {} is implausible", t.ndim); return false; }
  const int32_t nd = t.ndim;
  std::vector<int64_t> shape(static_cast<size_t>(nd)), strides;
  if (nd > 0 && !safe_read(t.shape, shape.data(), sizeof(int64_t) * static_cast<size_t>(nd))) {
    why = t.shape ? "shape array is unreadable" : "shape is NULL";
    return false;
  }
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) { why = fmt::format("negative extent {}", d); return false; }
    if (__builtin_mul_overflow(n, d, &n)) { why = "element count overflows int64"; return false; }
  }
  if (t.strides && nd > 0) {
    strides.resize(static_cast<size_t>(nd));
    if (!safe_read(t.strides, strides.data(), sizeof(int64_t) * static_cast<size_t>(nd))) {
      why = "strides array is unreadable";
      return false;
    }
  } else {
    strides = canonical_strides(DLPV_LAYOUT_CONTIGUOUS, shape);
  }
  if (n == 0) return true;
  if (t.dtype.bits == 0) { why = "dtype bits is 0"; return false; }
  // Size of the compact copy, with overflow checks (lanes 0 counts as 1, as element_bytes does).
  const uint64_t lanes = t.dtype.lanes ? t.dtype.lanes : 1u;
  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(n), lanes * t.dtype.bits, &total_bits) ||
      total_bits / 8 > kMaxGatherBytes) {
    why = fmt::format("{} elements of {} bits x {} lanes is an implausible size", n, t.dtype.bits, lanes);
    return false;
  }
  const size_t es = element_bytes(t.dtype);
  const uintptr_t data = reinterpret_cast<uintptr_t>(t.data);
  if (!data) { why = "data is NULL for a non-empty tensor"; return false; }
  uintptr_t base = 0;
  if (__builtin_add_overflow(data, t.byte_offset, &base)) {
    why = "data + byte_offset overflows the address space";
    return false;
  }
  if (es == 0) {  // packed sub-byte: only a compact tensor has a defined addressing
    if (strides != canonical_strides(DLPV_LAYOUT_CONTIGUOUS, shape)) {
      why = "non-compact strides on a packed sub-byte dtype (addressing undefined, A15)";
      return false;
    }
    out.assign(static_cast<size_t>((total_bits + 7) / 8), 0);
    if (padded_subbyte) {
      // IS_SUBBYTE_TYPE_PADDED: one element per byte, in its low bits (the padding unit is not
      // specified, A14; this is the reading every known padded producer uses). Repacked here.
      const uint64_t count = static_cast<uint64_t>(n) * lanes;
      std::vector<uint8_t> bytes(static_cast<size_t>(count));
      if (!read_data(t, reinterpret_cast<const void*>(base), bytes.data(), bytes.size())) {
        out.clear();
        why = "data bytes are unreadable";
        return false;
      }
      for (uint64_t i = 0; i < count; ++i)
        for (unsigned b = 0; b < t.dtype.bits; ++b)
          if ((bytes[static_cast<size_t>(i)] >> b) & 1u) {
            const uint64_t bit = i * t.dtype.bits + b;
            out[static_cast<size_t>(bit / 8)] |= static_cast<uint8_t>(1u << (bit % 8));
          }
      return true;
    }
    if (!read_data(t, reinterpret_cast<const void*>(base), out.data(), out.size())) {
      out.clear();
      why = "data bytes are unreadable";
      return false;
    }
    return true;
  }
  // Span in elements, with overflow checks, before touching memory.
  int64_t lo = 0, hi = 0;
  for (int32_t i = 0; i < nd; ++i) {
    int64_t reach;
    if (__builtin_mul_overflow(shape[static_cast<size_t>(i)] - 1, strides[static_cast<size_t>(i)], &reach) ||
        __builtin_add_overflow(reach < 0 ? lo : hi, reach, reach < 0 ? &lo : &hi)) {
      why = "strides address a span that overflows int64";
      return false;
    }
  }
  int64_t span_elems = 0, span_bytes = 0, lo_bytes = 0;
  if (__builtin_sub_overflow(hi, lo, &span_elems) || __builtin_add_overflow(span_elems, 1, &span_elems) ||
      __builtin_mul_overflow(span_elems, static_cast<int64_t>(es), &span_bytes) ||
      __builtin_mul_overflow(lo, static_cast<int64_t>(es), &lo_bytes)) {
    why = "strides address a span that overflows int64";
    return false;
  }
  // Address of the lowest byte addressed and one past the highest, without wrapping.
  const uint64_t below = static_cast<uint64_t>(0) - static_cast<uint64_t>(lo_bytes);  // lo <= 0
  uintptr_t first = 0, last = 0;
  if (below > base || __builtin_add_overflow(base - below, static_cast<uint64_t>(span_bytes), &last)) {
    why = fmt::format("strides address {} bytes from data{:+}: beyond the address space", span_bytes, lo_bytes);
    return false;
  }
  first = base - below;
  out.resize(static_cast<size_t>(n) * es);
  std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
  auto each_element = [&](auto&& copy_one) {
    for (int64_t k = 0; k < n; ++k) {
      int64_t off = -lo;  // in elements from `first`; within [0, span_elems) by construction
      for (int32_t i = 0; i < nd; ++i) off += idx[static_cast<size_t>(i)] * strides[static_cast<size_t>(i)];
      if (!copy_one(out.data() + static_cast<size_t>(k) * es, static_cast<uint64_t>(off) * es)) return false;
      for (int32_t i = nd; i-- > 0;) {
        if (++idx[static_cast<size_t>(i)] < shape[static_cast<size_t>(i)]) break;
        idx[static_cast<size_t>(i)] = 0;
      }
    }
    return true;
  };
  if (static_cast<uint64_t>(span_bytes) <= kMaxWindowBytes) {
    // One read of the whole span, then gather from the local copy.
    std::vector<char> window(static_cast<size_t>(span_bytes));
    if (!read_data(t, reinterpret_cast<const void*>(first), window.data(), window.size())) {
      out.clear();
      why = fmt::format("the {} bytes the strides address (from data{:+}) are not all readable",
                        span_bytes, lo_bytes);
      return false;
    }
    gather_window(reinterpret_cast<const uint8_t*>(window.data()), -lo, shape, strides, es, out.data());
    return true;
  }
  // A sparse span (huge strides over few elements): read the elements one by one.
  if (n > kMaxElementReads) {
    out.clear();
    why = fmt::format("strides address an implausible span ({} bytes for {} elements)", span_bytes, n);
    return false;
  }
  uint64_t bad_at = 0;
  const bool ok = each_element([&](uint8_t* dst, uint64_t at) {
    if (read_data(t, reinterpret_cast<const void*>(first + at), dst, es)) return true;
    bad_at = at;
    return false;
  });
  if (!ok) {
    out.clear();
    why = fmt::format("strides address {} bytes from data{:+}; the element at data{:+} is not readable",
                      span_bytes, lo_bytes, static_cast<int64_t>(bad_at) + lo_bytes);
    return false;
  }
  (void)last;
  return true;
}

namespace {
std::string element_text(DLDataType t, const uint8_t* p) {
  std::string hex = hex_bytes(p, element_bytes(t));
  if (t.lanes != 1) return hex;
  if (t.code == DLPV_CODE_FLOAT && t.bits == 32) { float f; std::memcpy(&f, p, 4); return fmt::format("{} ({})", f, hex); }
  if (t.code == DLPV_CODE_FLOAT && t.bits == 64) { double f; std::memcpy(&f, p, 8); return fmt::format("{} ({})", f, hex); }
  if ((t.code == DLPV_CODE_INT || t.code == DLPV_CODE_UINT || t.code == DLPV_CODE_BOOL) && t.bits <= 64 && t.bits % 8 == 0) {
    uint64_t u = 0;
    std::memcpy(&u, p, t.bits / 8);
    if (t.code == DLPV_CODE_INT && t.bits < 64 && (u >> (t.bits - 1)) & 1) u |= ~uint64_t{0} << t.bits;
    return t.code == DLPV_CODE_INT ? fmt::format("{} ({})", static_cast<int64_t>(u), hex)
                                   : fmt::format("{} ({})", u, hex);
  }
  return hex;
}
}  // namespace

namespace {
// Whether `n` bytes at p are a NaN of a float format of that width (bfloat16 when `bfloat`).
bool is_nan_part(const uint8_t* p, size_t n, bool bfloat) {
  uint64_t u = 0;
  for (size_t k = 0; k < n; ++k) u |= static_cast<uint64_t>(p[k]) << (8u * k);
  const unsigned e = n == 8 ? 11u : n == 4 ? 8u : bfloat ? 8u : 5u, m = static_cast<unsigned>(8u * n) - 1u - e;
  const uint64_t exp = (u >> m) & ((uint64_t{1} << e) - 1u), mant = u & ((uint64_t{1} << m) - 1u);
  return exp == (uint64_t{1} << e) - 1u && mant != 0;
}
}  // namespace

bool same_element(DLDataType dtype, const uint8_t* want, const uint8_t* got) {
  const size_t es = element_bytes(dtype);
  if (std::memcmp(want, got, es ? es : 1) == 0) return true;
  const bool fp = dtype.lanes == 1 && ((dtype.code == DLPV_CODE_FLOAT && (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64)) ||
                                       (dtype.code == DLPV_CODE_BFLOAT && dtype.bits == 16) ||
                                       (dtype.code == DLPV_CODE_COMPLEX && (dtype.bits == 64 || dtype.bits == 128)));
  if (!fp) return false;
  const size_t part = dtype.code == DLPV_CODE_COMPLEX ? es / 2 : es;
  for (size_t at = 0; at < es; at += part) {
    if (std::memcmp(want + at, got + at, part) == 0) continue;
    const bool bf = dtype.code == DLPV_CODE_BFLOAT;
    if (!is_nan_part(want + at, part, bf) || !is_nan_part(got + at, part, bf)) return false;
  }
  return true;
}

std::string describe_mismatch(DLDataType dtype, const std::vector<uint8_t>& want,
                              const std::vector<uint8_t>& got, size_t* first_index) {
  if (want.size() != got.size())
    return fmt::format("{} bytes expected, {} bytes read", want.size(), got.size());
  const size_t es = element_bytes(dtype);
  const size_t unit = es ? es : 1;
  size_t shown = 0, bad = 0;
  std::string text;
  for (size_t i = 0; i + unit <= want.size(); i += unit) {
    if (es ? same_element(dtype, want.data() + i, got.data() + i) : want[i] == got[i]) continue;
    if (bad++ == 0 && first_index) *first_index = i / unit;
    if (shown < 3) {
      text += fmt::format("{}{} {}: expected {}, observed {}", shown ? "; " : "",
                          es ? "element" : "byte", i / unit,
                          es ? element_text(dtype, want.data() + i) : hex_bytes(want.data() + i, 1),
                          es ? element_text(dtype, got.data() + i) : hex_bytes(got.data() + i, 1));
      ++shown;
    }
  }
  if (bad == 0) return {};
  return fmt::format("{} of {} {} differ: {}", bad, want.size() / unit, es ? "elements" : "bytes", text);
}

// ---- the inspector ---------------------------------------------------------------------

namespace {
bool is_aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

// The library may store any int32 in device_type; loading that as the C++ enum is undefined
// for values outside the enumerators' range, so it is read as the integer it is.
int32_t device_type_of(const DLDevice& d) {
  int32_t v;
  std::memcpy(&v, &d.device_type, sizeof v);
  return v;
}

// DTYPE-01 / DEV-02: an enum value the validator's newest known version (1.3) does not define.
// dlpack.h (DLPackVersion): "Minor version updates indicate the addition of enumeration
// values", so such a value is judged by the version the tensor declares.
void judge_enum(std::vector<Finding>& out, const char* req, EnumStanding standing, const InspectOptions& opt,
                const char* field, const char* defined_range, std::string observed) {
  const bool versioned_known = opt.versioned && opt.version.major == 1 && opt.version.minor <= DLPV_DLPACK_MINOR;
  const std::string declared = opt.versioned ? fmt::format("a tensor declaring {}.{}", opt.version.major, opt.version.minor)
                                             : std::string("a legacy tensor (no version)");
  std::string message;
  switch (standing) {
    case EnumStanding::defined:
      message = fmt::format("{} is defined by DLPack (up to 1.3)", field);
      break;
    case EnumStanding::invalid:
      message = fmt::format("{} is a value DLPack never assigned (0, 5 and 6 are unassigned device types)", field);
      break;
    case EnumStanding::provisional:
      message = fmt::format("{} is provisional (only on DLPack main after 1.3, no release yet; checklist A24): "
                            "lawful for a newer header, but no released consumer knows it ({})", field, declared);
      break;
    case EnumStanding::unknown:
      message = versioned_known
                    ? fmt::format("{} must be one DLPack {}.{} defines: {} is bound to that version's values",
                                  field, opt.version.major, opt.version.minor, declared)
                    : fmt::format("{} is unknown to DLPack 1.3; minor versions add enum values, so in {} it may "
                                  "be newer than the validator (a warning, not a failure)", field, declared);
      break;
  }
  out.push_back(Finding{req, unknown_enum_severity(standing, opt.versioned, opt.version),
                        standing == EnumStanding::defined, std::move(message), defined_range, std::move(observed)});
}

// device_name() of the library's device, never loading a foreign value as the enum: named
// when it is the expected device type, else shown as the number it is.
std::string device_text(const DLDevice& d, const DLDevice& want) {
  const int32_t v = device_type_of(d);
  if (v != static_cast<int32_t>(want.device_type)) return fmt::format("device_type {}:{}", v, d.device_id);
  DLDevice named = want;
  named.device_id = d.device_id;
  return device_name(named);
}
}  // namespace

namespace {

/// One inspection of a tensor against what was asked (inspect_tensor), in its steps: the struct,
/// its shape, its dtype, its device, its strides and its data. A step that finds the tensor
/// cannot be judged further returns false, and the inspection stops there.
struct Inspection {
  Inspection(const DLTensor& tensor_, const TensorExpectation& want_, const InspectOptions& opt_,
             std::vector<Finding>& out_)
      : tensor(tensor_), want(want_), opt(opt_), out(out_) {}
  const DLTensor& tensor;
  const TensorExpectation& want;
  const InspectOptions& opt;
  std::vector<Finding>& out;
  DLTensor t{};                ///< the struct, copied without trusting the pointer
  std::vector<int64_t> shape;  ///< its shape, read
  int32_t dt = 0;              ///< its device type
  std::vector<int64_t> canon;  ///< the strides asked for
  int64_t n = 0;               ///< the elements asked for

  bool add(const char* req, Severity sev, bool ok, std::string msg, std::string exp = {}, std::string obs = {}) {
    out.push_back(Finding{req, sev, ok, std::move(msg), std::move(exp), std::move(obs)});
    return ok;
  }

  /// The struct itself lives in the library's memory: copy it without trusting the pointer, and
  /// judge only the copy. Its rank must be the array's.
  bool read_struct() {
    if (!add("LAYOUT-01", Severity::must, safe_read(&tensor, &t, sizeof t),
             "the DLTensor struct is readable memory", "readable",
             fmt::format("unreadable at {}", static_cast<const void*>(&tensor))))
      return false;
    add("LAYOUT-01", Severity::must, is_aligned(&tensor, alignof(DLTensor)),
        "the managed tensor struct is aligned for its type",
        fmt::format("address multiple of {}", alignof(DLTensor)),
        fmt::format("{}", static_cast<const void*>(&tensor)));
    const int32_t nd_want = static_cast<int32_t>(want.shape.size());
    if (!add("LAYOUT-01", Severity::must, t.ndim >= 0 && t.ndim <= 1024,
             "ndim is plausible (0..1024); an implausible value suggests the wrong struct kind",
             "0 <= ndim <= 1024", std::to_string(t.ndim)))
      return false;
    if (!add("LAYOUT-05", Severity::must, t.ndim == nd_want, "ndim equals the array's rank",
             std::to_string(nd_want), std::to_string(t.ndim)))
      return false;
    return true;
  }

  bool shape_matches() {
    shape.resize(static_cast<size_t>(t.ndim));
    if (t.ndim > 0) {
      if (!add("LAYOUT-05", Severity::must,
               t.shape && safe_read(t.shape, shape.data(), shape.size() * sizeof(int64_t)),
               "shape points to ndim readable entries", "readable int64[" + std::to_string(t.ndim) + "]",
               t.shape ? "unreadable pointer" : "NULL"))
        return false;
      add("LAYOUT-05", Severity::must, is_aligned(t.shape, alignof(int64_t)),
          "shape is aligned for int64_t", fmt::format("address multiple of {}", alignof(int64_t)),
          fmt::format("{}", static_cast<const void*>(t.shape)));
    }
    if (!add("LAYOUT-05", Severity::must, shape == want.shape, "shape equals the array's shape",
             shape_text(want.shape), shape_text(shape)))
      return false;
    return true;
  }

  bool dtype_matches() {
    add("DTYPE-03", Severity::must, t.dtype.lanes >= 1, "lanes >= 1", ">= 1", std::to_string(t.dtype.lanes));
    judge_enum(out, "DTYPE-01", dtype_code_standing(t.dtype.code), opt, "dtype.code", "0..17",
               std::to_string(t.dtype.code));
    if (opt.versioned && opt.version.major == 1) {
      // Codes 7-17 arrived with 1.1: a tensor using them must not declare 1.0 (VER-02).
      const bool needs_1_1 = t.dtype.code >= DLPV_CODE_FLOAT8_E3M4 && t.dtype.code <= DLPV_CODE_LAST;
      add("VER-02", Severity::should, !needs_1_1 || opt.version.minor >= 1,
          "the declared minor version covers the dtype codes used (codes 7-17 need >= 1.1)",
          ">= 1.1", fmt::format("{}.{} with {}", opt.version.major, opt.version.minor, dtype_name(t.dtype)));
    }
    // The requirement a wrong dtype breaks depends on the family asked for.
    const char* dtype_req = "DTYPE-02";
    if (want.dtype.code == DLPV_CODE_BOOL) dtype_req = "DTYPE-11";
    else if (want.dtype.code == DLPV_CODE_COMPLEX) dtype_req = "DTYPE-10";
    else if (want.dtype.code >= DLPV_CODE_FLOAT8_E3M4 && want.dtype.code <= DLPV_CODE_FLOAT8_E8M0FNU) dtype_req = "DTYPE-13";
    else if (want.dtype.code >= DLPV_CODE_FLOAT6_E2M3FN) dtype_req = "DTYPE-05";
    const bool legacy_bool = want.dtype.code == DLPV_CODE_BOOL && t.dtype.code == DLPV_CODE_UINT &&
                             t.dtype.bits == 8 && t.dtype.lanes == 1 && !opt.versioned &&
                             opt.version.major == 0;
    if (legacy_bool) {
      // Before DLPack 0.8 there was no bool code; a 0.x producer using uint8 is a fact, not a bug.
      add(dtype_req, Severity::may, true, "bool exported as (1,8,1) by a pre-0.8 producer (no kDLBool yet)");
    } else if (!add(dtype_req, Severity::must, dtype_equal(t.dtype, want.dtype),
                    "dtype is the DLPack encoding of the requested element type",
                    fmt::format("{} ({},{},{})", dtype_name(want.dtype), want.dtype.code, want.dtype.bits, want.dtype.lanes),
                    fmt::format("{} ({},{},{})", dtype_name(t.dtype), t.dtype.code, t.dtype.bits, t.dtype.lanes))) {
      return false;
    }
    return true;
  }

  void device() {
    dt = device_type_of(t.device);
    judge_enum(out, "DEV-02", device_type_standing(dt), opt, "device_type", "1-4 or 7-18",
               std::to_string(dt));
    add("DEV-02", Severity::must, dt == static_cast<int32_t>(want.device.device_type) &&
        t.device.device_id == want.device.device_id, "device is the array's device",
        device_name(want.device), device_text(t.device, want.device));
    if (dt == kDLCPU || dt == kDLCUDAHost || dt == kDLROCMHost || dt == kDLCUDAManaged)
      add("DEV-03", Severity::should, t.device.device_id == 0, "device_id is 0 for host-like memory",
          "0", std::to_string(t.device.device_id));
  }

  bool strides_readable() {
    canon = canonical_strides(want.layout, want.shape);
    n = element_count(want.shape);
    if (!t.strides && t.ndim > 0) {
      const bool v12 = opt.versioned && opt.version.major == 1 && opt.version.minor >= 2;
      if (v12) {
        add("LAYOUT-02", Severity::must, false, "strides must be non-NULL when ndim > 0 (DLPack >= 1.2)",
            "strides[ndim]", fmt::format("NULL (tensor declares {}.{})", opt.version.major, opt.version.minor));
      } else {
        add("LAYOUT-02", Severity::may, true,
            "NULL strides (compact row-major) are allowed for legacy and <= 1.1 tensors");
      }
    } else if (t.ndim > 0) {
      std::vector<int64_t> st(static_cast<size_t>(t.ndim));
      if (!add("LAYOUT-04", Severity::must, safe_read(t.strides, st.data(), st.size() * sizeof(int64_t)),
               "strides point to ndim readable entries", "readable", "unreadable pointer"))
        return false;
      add("LAYOUT-04", Severity::must, is_aligned(t.strides, alignof(int64_t)),
          "strides is aligned for int64_t", fmt::format("address multiple of {}", alignof(int64_t)),
          fmt::format("{}", static_cast<const void*>(t.strides)));
      // Strides in bytes are the classic bug: every significant stride is itemsize x ours.
      const int64_t es = static_cast<int64_t>(element_bytes(t.dtype));
      bool bytes_like = es > 1 && n > 1, any_significant = false;
      for (size_t i = 0; i < st.size(); ++i) {
        if (want.shape[i] <= 1 || canon[i] == 0) continue;
        any_significant = true;
        if (st[i] != canon[i] * es) bytes_like = false;
      }
      add("LAYOUT-04", Severity::must, !(bytes_like && any_significant),
          "strides are counted in elements, not bytes", shape_text(canon),
          shape_text(st));
    }
    return true;
  }

  /// The data (CPU-addressable memory; CUDA memory where the driver tells where it is; oneAPI
  /// USM through the SYCL runtime), compared with the reference pattern.
  void data() {
    if (!opt.compare_data) return;
    if (n == 0) {
      add("LAYOUT-10", Severity::should, t.data == nullptr,
          "a zero-size tensor should have data == NULL", "NULL", fmt::format("{}", t.data));
      return;
    }
    // Where the memory really is, when CUDA can tell (docs/design.md §8).
    std::string no_cuda;
    const bool cuda_ok = cuda::available(&no_cuda);
    if (cuda_ok && t.data) {
      const cuda::PointerInfo pi = cuda::pointer_info(t.data);
      if (dt == kDLCUDA)
        add("DEV-02", Severity::must, pi.known && pi.memory_type == 2 && pi.device == t.device.device_id,
            "a kDLCUDA tensor's data is device memory of the labelled device",
            fmt::format("device memory on cuda:{}", t.device.device_id),
            pi.known ? fmt::format("memory type {} on device {}", pi.memory_type, pi.device) : "host memory");
      else if (dt == kDLCUDAManaged)
        add("DEV-02", Severity::must, pi.known && pi.managed, "a kDLCUDAManaged tensor's data is managed memory",
            "managed memory", pi.known ? fmt::format("memory type {}, not managed", pi.memory_type) : "host memory");
      else if (dt == kDLCUDAHost)
        add("DEV-02", Severity::must, pi.known && pi.memory_type == 1, "a kDLCUDAHost tensor's data is pinned host memory",
            "pinned (page-locked) memory", pi.known ? fmt::format("memory type {}", pi.memory_type) : "pageable host memory");
      else if (dt == kDLCPU)
        add("DEV-02", Severity::should, !(pi.known && pi.memory_type == 1 && !pi.managed),
            "pinned memory should be labelled kDLCUDAHost rather than kDLCPU", "pageable host memory",
            "pinned (page-locked) CUDA host memory");
    } else if (dt == kDLCUDA || dt == kDLCUDAManaged || dt == kDLCUDAHost) {
      add("LAYOUT-07", Severity::may, true, "device memory not checked: " + no_cuda);
      return;
    }
    // kDLOneAPI (14): USM of the SYCL runtime's default context (the one dpctl's queues share), read
    // through the runtime; host memory under that label is a mislabel.
    if (dt == DLPV_DEV_ONEAPI) {
      std::string no_sycl;
      if (!sycl::available(&no_sycl)) {
        add("LAYOUT-07", Severity::may, true, "oneAPI memory not checked: " + no_sycl);
        return;
      }
      const int usm = t.data ? sycl::pointer_type(t.data) : 0;
      if (!add("DEV-02", Severity::must, usm != 0,
               "a kDLOneAPI tensor's data is USM memory of the SYCL device (device, shared or host allocation)",
               "a USM allocation", sycl::pointer_type_name(usm)))
        return;
    }
    if (dt != kDLCPU && dt != kDLCUDAHost && dt != kDLCUDAManaged && dt != kDLROCMHost && dt != kDLCUDA &&
        dt != DLPV_DEV_ONEAPI) {
      add("LAYOUT-07", Severity::may, true, "data not compared: memory of " + device_text(t.device, want.device) +
          " is not host-addressable");
      return;
    }
    std::vector<uint8_t> got;
    std::string why;
    if (!add("LAYOUT-07", Severity::must, gather_elements(t, got, why, opt.padded_subbyte),
             "data + byte_offset and strides address readable memory holding the elements",
             "readable elements", why))
      return;
    const std::vector<uint8_t> expect = expected_bytes(want.dtype, want.shape, want.layout, want.values);
    std::string diff = describe_mismatch(want.dtype, expect, got);
    add("LAYOUT-07", Severity::must, diff.empty(),
        "element (i0, ..., ik) read at data + byte_offset + sum(i*stride)*itemsize holds the "
        "reference pattern", "the reference pattern", diff);
  }
};

}  // namespace

void inspect_tensor(const DLTensor& tensor, const TensorExpectation& want, const InspectOptions& opt,
                    std::vector<Finding>& out) {
  Inspection in(tensor, want, opt, out);
  if (!in.read_struct() || !in.shape_matches() || !in.dtype_matches()) return;
  in.device();
  if (in.strides_readable()) in.data();
}

void record(CaseContext& ctx, const std::vector<Finding>& findings) {
  for (const Finding& f : findings)
    ctx.check_as(f.severity, f.ok, f.requirement, f.message, f.expected, f.observed);
}

}  // namespace dlpv
