// SPDX-License-Identifier: Apache-2.0
// export_reader.cpp: the generic mode's read-back (python_shim/validator/adapters/generic.py,
// Export) through the harness's own tensor reader: an unconsumed DLPack capsule's struct read
// without trusting it (safe_read), its elements gathered by gather_elements (the inspector the
// cases use), the capsule then consumed as a consumer must. The one reader of a DLPack tensor in
// the Python process.
#include "export_reader.hpp"

#include <dlpack/dlpack.h>
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <set>
#include <string>
#include <vector>

#include <dlpack_validate/python_subject.hpp>
#include <dlpack_validate/tensor.hpp>

namespace dlpv::python {

namespace {

constexpr uint64_t kSubbytePadded = 1ull << 2;  // DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
const std::set<int> kDeviceTypes = {1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};  // DLPack 1.3
const std::set<int> kHost = {1, 3, 11};  // kDLCPU, kDLCUDAHost, kDLROCMHost: host-readable

[[noreturn]] void not_implemented(const std::string& why) {
  PyErr_SetString(PyExc_NotImplementedError, why.c_str());
  throw py::error_already_set();
}

/// A capsule's tensor, read without trusting it: what read_capsule and capsule_elements share.
struct Held {
  std::string name;
  bool versioned = false;
  void* pointer = nullptr;
  uint32_t major = 0, minor = 0;
  uint64_t flags = 0;
  DLTensor tensor{};
  std::vector<int64_t> shape, strides;
};

std::string tuple_text(const std::vector<int64_t>& v) { return py::repr(py::tuple(py::cast(v))).cast<std::string>(); }

/// Why a DLTensor's fields cannot be a real tensor's, or "".
std::string implausible(const DLTensor& t) {
  if (t.ndim < 0 || t.ndim > 64) return fmt::format("ndim {}", t.ndim);
  if (t.ndim && !t.shape) return fmt::format("ndim {} with a NULL shape", t.ndim);
  if (!kDeviceTypes.count(static_cast<int>(t.device.device_type)))
    return fmt::format("device type {}", static_cast<int>(t.device.device_type));
  if (t.dtype.lanes == 0 || t.dtype.bits == 0)
    return fmt::format("dtype ({}, {}, {})", t.dtype.code, t.dtype.bits, t.dtype.lanes);
  return "";
}

/// The capsule's tensor, or NotImplementedError (left unconsumed: its destructor frees it) for a
/// capsule that is not an unconsumed DLPack 1.x or legacy one whose struct reads as a tensor.
Held hold(py::handle cap) {
  Held h;
  h.name = capsule_name(cap);
  if (h.name != kLegacyName && h.name != kVersionedName)
    not_implemented(fmt::format("__dlpack__() returned a capsule named {}",
                                h.name == "<NULL>" ? std::string("None") : py::repr(py::bytes(h.name)).cast<std::string>()));
  h.pointer = capsule_pointer(cap);
  if (!h.pointer) not_implemented(fmt::format("the {} capsule holds NULL", h.name));
  h.versioned = h.name == kVersionedName;
  if (h.versioned) {
    DLManagedTensorVersioned m{};
    if (!safe_read(h.pointer, &m, sizeof m)) not_implemented(fmt::format("the {} capsule's struct is unreadable", h.name));
    h.major = m.version.major;
    h.minor = m.version.minor;
    if (h.major != 1) not_implemented(fmt::format("the export is stamped DLPack {}.{}, not 1.x", h.major, h.minor));
    h.flags = m.flags;
    h.tensor = m.dl_tensor;
  } else if (!safe_read(h.pointer, &h.tensor, sizeof h.tensor)) {
    not_implemented(fmt::format("the {} capsule's struct is unreadable", h.name));
  }
  if (const std::string odd = implausible(h.tensor); !odd.empty())
    // Not a DLTensor of this kind: a struct under the other kind's name (a versioned one named
    // 'dltensor'). Reading it, or calling what sits where the deleter would be, could crash.
    not_implemented(fmt::format("the {} capsule's struct does not read as one ({}): a capsule name that does not "
                                "match its struct?",
                                h.name, odd));
  const auto nd = static_cast<size_t>(h.tensor.ndim);
  h.shape.resize(nd);
  if (nd && !safe_read(h.tensor.shape, h.shape.data(), nd * sizeof(int64_t)))
    throw py::value_error(fmt::format("the exported tensor's shape array (ndim {}) is unreadable", nd));
  if (nd && h.tensor.strides) {
    h.strides.resize(nd);
    if (!safe_read(h.tensor.strides, h.strides.data(), nd * sizeof(int64_t)))
      throw py::value_error(fmt::format("the exported tensor's strides array (ndim {}) is unreadable", nd));
  } else {  // compact row-major (legacy NULL strides)
    h.strides.assign(nd, 1);
    int64_t acc = 1;
    for (size_t i = nd; i-- > 0;) {
      h.strides[i] = acc;
      acc *= h.shape[i];
    }
  }
  return h;
}

}  // namespace

py::dict read_capsule(py::handle cap) {
  const Held h = hold(cap);
  py::dict out;
  out["versioned"] = h.versioned;
  out["version"] = h.versioned ? py::object(py::make_tuple(h.major, h.minor)) : py::object(py::none());
  out["flags"] = h.flags;
  out["device"] = py::make_tuple(static_cast<int>(h.tensor.device.device_type), h.tensor.device.device_id);
  out["dtype"] = py::make_tuple(h.tensor.dtype.code, h.tensor.dtype.bits, h.tensor.dtype.lanes);
  out["shape"] = py::tuple(py::cast(h.shape));
  out["strides"] = py::tuple(py::cast(h.strides));
  return out;
}

py::bytes capsule_elements(py::handle cap) {
  const Held h = hold(cap);
  const DLTensor& t = h.tensor;
  const int device = static_cast<int>(t.device.device_type);
  if (!kHost.count(device))
    not_implemented(fmt::format("the export is on device ({}, {}): the validator's inspector reads host memory only",
                                device, t.device.device_id));
  if (t.dtype.lanes != 1) not_implemented(fmt::format("the export has {} lanes per element", t.dtype.lanes));
  int64_t n = 1;
  for (int64_t s : h.shape) {
    if (s < 0) throw py::value_error(fmt::format("the exported tensor has shape {}", tuple_text(h.shape)));
    n *= s;
  }
  if (n == 0) return py::bytes("");
  if (!t.data) throw py::value_error(fmt::format("the exported tensor of {} elements has data == NULL", n));
  const bool whole_bytes = t.dtype.bits % 8 == 0;
  const bool padded = !whole_bytes && (h.flags & kSubbytePadded);
  if (!whole_bytes && !padded) {  // packed sub-byte elements: only compact ones have an addressing
    for (size_t i = 0; i < h.shape.size(); ++i) {
      int64_t compact = 1;
      for (size_t j = i + 1; j < h.shape.size(); ++j) compact *= h.shape[j];
      if (h.shape[i] > 1 && h.strides[i] != compact)
        not_implemented(fmt::format("a packed {}-bit export with strides {} (not compact)", t.dtype.bits,
                                    tuple_text(h.strides)));
    }
  }
  std::vector<uint8_t> bytes;
  std::string why;
  if (!gather_elements(t, bytes, why, padded)) throw py::value_error("the exported tensor cannot be read: " + why);
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

void consume_capsule(py::handle cap) {
  const std::string name = capsule_name(cap);
  if (name != kLegacyName && name != kVersionedName) return;  // consumed, or not ours to consume
  void* p = capsule_pointer(cap);
  if (!p) return;
  // Renamed first (the capsule's destructor then leaves the tensor alone), then its deleter once.
  static const char* const used_legacy = "used_dltensor";
  static const char* const used_versioned = "used_dltensor_versioned";
  if (PyCapsule_SetName(cap.ptr(), name == kVersionedName ? used_versioned : used_legacy) != 0)
    throw py::error_already_set();
  call_deleter(p, name == kVersionedName);
}

}  // namespace dlpv::python
