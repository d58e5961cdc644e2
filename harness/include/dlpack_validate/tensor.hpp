// harness/include/dlpack_validate/tensor.hpp: the validator's view of DLPack tensors: the
// defensive inspector (docs/design.md §5), expected pattern bytes, and validator-made tensors with
// counting, poisoning deleters for consumer cases.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/status.hpp>
#include <dlpack_validate/plugin.h>

#include <atomic>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlpv {

class CaseContext;  // dlpack_validate/case.hpp

// ---- names -----------------------------------------------------------------------------
std::string dtype_name(DLDataType t);       ///< "float32", "int64", "(2,24,1)" if unknown
std::optional<DLDataType> dtype_from_name(const std::string& name);
std::string device_name(DLDevice d);        ///< "cpu:0", "cuda:1", "device_type 99:0"
const char* layout_name(uint32_t layout);   ///< "contiguous", ...
std::optional<uint32_t> layout_from_name(const std::string& name);
/// A tensor's shape (or strides) read through its pointer: "(2, 3)", "(4,)", "()" for ndim 0;
/// "NULL" for a NULL pointer, which ndim 0 allows: "() (shape pointer NULL, allowed for ndim 0)".
std::string shape_text(const int64_t* v, int32_t n);
/// Values held here: "(2, 3)", "(4,)", "()" (a 0-d shape).
std::string shape_text(const std::vector<int64_t>& v);
std::string hex_bytes(const void* p, size_t n);
/// `phrase` after its indefinite article, as it is spoken: "an int16 (3,) tensor", "an offset
/// tensor", "an empty array", but "a uint8 tensor", "a ones array", "a 3x4 tensor".
std::string with_article(const std::string& phrase);
/// Whether the article before `phrase` is "an".
bool wants_an(const std::string& phrase);
bool dtype_equal(DLDataType a, DLDataType b);
/// Where an enum value of a tensor stands against the DLPack versions the validator knows:
/// defined by a release (up to 1.3), provisional (only on DLPack's unreleased main after 1.3:
/// kDLBcomplex, kDLTPU, kDLTPUHost, kDLAscend), unknown, or invalid (device types 0, 5, 6).
enum class EnumStanding { defined, provisional, unknown, invalid };
EnumStanding dtype_code_standing(uint8_t code);
EnumStanding device_type_standing(int32_t device_type);
/// DTYPE-01 / DEV-02: how much a value that is not `defined` weighs. dlpack.h: "Minor version
/// updates indicate the addition of enumeration values." So an unknown value is a MUST
/// violation only in a tensor that declares a version the validator knows (1.0 .. 1.3); in a
/// legacy tensor or one declaring a newer minor it is a warning, as is a provisional value
/// (checklist A24). Invalid values always fail; `defined` returns Severity::may (no finding).
Severity unknown_enum_severity(EnumStanding standing, bool versioned, DLPackVersion declared);
size_t element_bytes(DLDataType t);  ///< 0 for sub-byte dtypes

/// Bytes the C heap holds (malloc'd + mmapped blocks): how the leak cases see a library's
/// allocations grow or shrink.
size_t heap_in_use();

/// Run a managed tensor's deleter (if it has one): `managed` is a DLManagedTensorVersioned*
/// when `versioned`, else a DLManagedTensor*.
inline void call_deleter(void* managed, bool versioned) {
  if (!managed) return;
  if (versioned) {
    auto* v = static_cast<DLManagedTensorVersioned*>(managed);
    if (v->deleter) v->deleter(v);
  } else {
    auto* l = static_cast<DLManagedTensor*>(managed);
    if (l->deleter) l->deleter(l);
  }
}

/// Counts the calls to a library's own deleter: the tensor's deleter pointer is replaced by a
/// trampoline that counts every call and forwards only the first to the library (so a second
/// call is seen, never a double free). For tensors the validator did not make (pair cases, a
/// producer's capsule).
class DeleterCounter {
 public:
  /// `managed`: a DLManagedTensorVersioned* (versioned) or DLManagedTensor*. A NULL deleter is
  /// left alone (installed() is then false).
  DeleterCounter(void* managed, bool versioned);
  ~DeleterCounter();
  DeleterCounter(const DeleterCounter&) = delete;
  DeleterCounter& operator=(const DeleterCounter&) = delete;
  bool installed() const { return installed_; }
  int calls() const;

 private:
  const void* key_ = nullptr;
  bool installed_ = false;
};

// ---- safe memory access ----------------------------------------------------------------
/// Copy n bytes from addr without faulting on a bad address (process_vm_readv on ourselves);
/// returns false if any byte is unreadable.
bool safe_read(const void* addr, void* dst, size_t n);

// ---- the layouts of docs/design.md §3 --------------------------------------------------
/// Element strides the validator expects a producer to use for `layout` over `shape`
/// (the canonical ones; a producer may pick others where the dimension is 1 or 0).
std::vector<int64_t> canonical_strides(uint32_t layout, const std::vector<int64_t>& shape);
/// Pattern bytes, row-major compact, of what logical element i must hold for `layout`
/// (BROADCAST repeats shape[1:] along axis 0); `values` DLPV_VALUES_EDGE: the edge pattern.
std::vector<uint8_t> expected_bytes(DLDataType dtype, const std::vector<int64_t>& shape,
                                    uint32_t layout, int values = DLPV_VALUES_PLAIN);
/// dlpv_pattern_fill_values, byte for byte, in memcpy time: the pattern of plugin.h repeats
/// (pattern_period), so one period is encoded and copied on. Sub-byte dtypes, several lanes and
/// codes without a known period are encoded element by element.
size_t pattern_fill(DLDataType dtype, int64_t n, void* dst, int values = DLPV_VALUES_PLAIN);
/// Elements after which plugin.h's pattern of `dtype` repeats, or 0 where not known.
int64_t pattern_period(DLDataType dtype, int values);
int64_t element_count(const std::vector<int64_t>& shape);

// ---- the inspector ---------------------------------------------------------------------
struct Finding {
  std::string requirement;
  Severity severity = Severity::must;
  bool ok = true;
  std::string message;
  std::string expected;
  std::string observed;
};

/// What the validator asked for (producer cases) or built (consumer cases).
struct TensorExpectation {
  DLDataType dtype{2, 32, 1};
  DLDevice device{kDLCPU, 0};
  std::vector<int64_t> shape;
  uint32_t layout = DLPV_LAYOUT_CONTIGUOUS;
  int values = DLPV_VALUES_PLAIN;  ///< the pattern asked for: the small numbers or the edge values
};

struct InspectOptions {
  bool versioned = false;
  DLPackVersion version{0, 0};  ///< declared by the tensor (versioned) or the subject
  bool compare_data = true;
  bool padded_subbyte = false;  ///< the tensor's flags say IS_SUBBYTE_TYPE_PADDED
};

/// Validate every field of `t` against the expectation before touching its memory, then
/// read its elements (CPU) through the strides and compare them with the pattern. Appends
/// one finding per property checked, passing ones included.
void inspect_tensor(const DLTensor& t, const TensorExpectation& want, const InspectOptions& opt,
                    std::vector<Finding>& out);

/// Gather the elements a CPU tensor addresses into row-major compact bytes. Returns false
/// (with `why`) if the fields are implausible or any byte is unreadable.
/// `padded_subbyte`: the tensor carries IS_SUBBYTE_TYPE_PADDED (sub-byte elements one per
/// byte); the result is repacked to the compact packed form either way.
bool gather_elements(const DLTensor& t, std::vector<uint8_t>& out, std::string& why, bool padded_subbyte = false);
/// Whether an element read (`got`) holds the value written (`want`): the same bytes, or, for a
/// float, bfloat16 or complex element, a NaN where a NaN was written (each part). A NaN's payload
/// is not its value: a copy may pass it through another format (Paddle's float32 to bfloat16
/// cast makes the quiet NaN 0x7fc0 into 0x7fff), and the edge pattern's NaN is read as any NaN.
bool same_element(DLDataType dtype, const uint8_t* want, const uint8_t* got);

/// First mismatches between two row-major compact buffers, as one line.
std::string describe_mismatch(DLDataType dtype, const std::vector<uint8_t>& want,
                              const std::vector<uint8_t>& got, size_t* first_index = nullptr);

/// Record findings into a case context.
void record(CaseContext& ctx, const std::vector<Finding>& findings);

// ---- validator-made tensors ------------------------------------------------------------
enum class DeleterKind { counting, null };

struct MadeSpec {
  DLDataType dtype{2, 32, 1};
  std::vector<int64_t> shape{3, 4};
  uint32_t layout = DLPV_LAYOUT_CONTIGUOUS;
  uint64_t extra_byte_offset = 0;  ///< data points this many bytes before element 0
  bool null_strides = false;
  bool null_shape = false;         ///< only meaningful for ndim == 0
  DLPackVersion version{1, 3};
  uint64_t flags = 0;
  DeleterKind deleter = DeleterKind::counting;
  bool guard_after_prefix = false; ///< dl_tensor lies in a PROT_NONE page (versioned only)
  bool null_data = false;          ///< zero-size tensors
  /// Strides written as given instead of the layout's (zero-size tensors only, which address no
  /// element: every convention a producer uses for them is lawful)
  std::vector<int64_t> strides;
  size_t misalign = 0;             ///< shift the element storage by this many bytes
  DLDevice device{kDLCPU, 0};      ///< the label only: the memory is always host memory
  bool padded_subbyte = false;     ///< sub-byte dtype stored one element per byte (flag 4)
  bool device_memory = false;      ///< place the storage in real memory of `device` (CUDA kinds)
  int values = DLPV_VALUES_PLAIN;  ///< the elements: the small numbers, or the edge pattern
};

/// A tensor built by the validator. It owns its buffers for the whole case (so a consumer
/// touching freed data reads poison rather than crashing nondeterministically), counts
/// deleter calls, and poisons data (0xDB) and managed struct when the deleter runs, so a
/// consumer still viewing the data reads garbage and later touches of the struct's pointers
/// hit a guard page.
class MadeTensor {
 public:
  static std::unique_ptr<MadeTensor> make(const MadeSpec& spec, bool versioned);
  ~MadeTensor();
  MadeTensor(const MadeTensor&) = delete;
  MadeTensor& operator=(const MadeTensor&) = delete;

  DLManagedTensorVersioned* versioned() { return versioned_; }
  DLManagedTensor* legacy() { return legacy_; }
  int deleter_calls() const { return deleter_calls_.load(); }
  /// The bytes a correct consumer must read back (row-major compact).
  const std::vector<uint8_t>& expected() const { return expected_; }
  /// A READ_ONLY tensor's host data lies in pages the consumer cannot write (a write faults);
  /// true when its bytes differ from what was made (now, or when the deleter ran: the deleter
  /// poisons them afterwards). Always false for other tensors.
  bool read_only_data_written() const;
  const MadeSpec& spec() const { return spec_; }

 private:
  MadeTensor() = default;
  static void versioned_deleter(DLManagedTensorVersioned* self);
  static void legacy_deleter(DLManagedTensor* self);
  static void poisoned_versioned_deleter(DLManagedTensorVersioned* self);
  static void poisoned_legacy_deleter(DLManagedTensor* self);
  void poison();
  bool ro_bytes_changed() const;  ///< the read-only block differs from buffer_ (the bytes as made)

  MadeSpec spec_;
  DLManagedTensorVersioned* versioned_ = nullptr;
  DLManagedTensor* legacy_ = nullptr;
  void* struct_block_ = nullptr;  ///< heap or mmap block holding the managed struct
  size_t struct_block_size_ = 0;
  bool struct_mmapped_ = false;
  std::vector<uint8_t> buffer_;
  void* ro_block_ = nullptr;       ///< READ_ONLY host data: a PROT_READ copy of buffer_ (from ro_head_ on)
  size_t ro_size_ = 0, ro_head_ = 0;
  bool ro_written_at_delete_ = false;
  void* device_buffer_ = nullptr;  ///< CUDA copy of buffer_ (from device_head_ on) when spec.device_memory
  size_t device_head_ = 0;         ///< where buffer_'s 256-byte-aligned storage starts
  std::vector<int64_t> shape_, strides_;
  std::vector<uint8_t> expected_;
  std::atomic<int> deleter_calls_{0};
};

/// Waits (up to `max_ms`, polling) until `calls()` reaches `want`, and returns the last count.
/// Some consumers release a tensor on a thread of their own a moment after the array dies
/// (JAX): lawful, so a deleter count is judged only after this grace period.
int await_calls(const std::function<int()>& calls, int want, int max_ms = 500);

/// Address inside a PROT_NONE page: any access crashes (poison for freed pointers).
void* guard_address();

/// What a death means while a consumer holds a tensor made with guard_after_prefix: it read
/// the struct past the version prefix, which VER-03 forbids, and the validator's guard page
/// made the read fault (empty for any other tensor). For CaseContext::phase.
CaseContext::DeathMeaning guard_meaning(const MadeSpec& spec, bool versioned);

}  // namespace dlpv
