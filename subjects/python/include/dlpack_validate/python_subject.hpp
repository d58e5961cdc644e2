// subjects/python/include/dlpack_validate/python_subject.hpp: a Python package (through its adapter, docs/design.md §4) as a
// dlpv::Subject, plus what Python-protocol cases need to reach Python.
//
// GIL rules: cases and the worker loop run with the GIL released. Every Subject method
// takes the GIL itself; Python-protocol cases take it (py::gil_scoped_acquire) around the
// Python work and give it back (py::gil_scoped_release) around anything that may block or
// wait for another thread (a deleter run on a fresh thread, a subprocess).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>
#include <dlpack_validate/tensor.hpp>
#include <pybind11/pybind11.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlpv::python {

namespace py = pybind11;

/// Static capsule names (capsules keep only the pointer, CAP-07).
inline constexpr const char* kLegacyName = "dltensor";
inline constexpr const char* kVersionedName = "dltensor_versioned";
inline constexpr const char* kUsedLegacyName = "used_dltensor";
inline constexpr const char* kUsedVersionedName = "used_dltensor_versioned";
inline constexpr const char* kExchangeName = "dlpack_exchange_api";

/// What the load checks found out about the package.
struct Facts {
  bool producer_versioned = false;      ///< __dlpack__(max_version=(1,3)) gave a versioned capsule
  bool producer_legacy = false;         ///< __dlpack__() gave a legacy capsule
  DLPackVersion producer_version{0, 0}; ///< version stamped in the load check's versioned export
  bool consumer_versioned = false;      ///< from_dlpack passes max_version >= (1,0)
  /// A consumer that never asks for max_version but imports a 'dltensor_versioned' capsule
  /// handed to it anyway: it parses versioned tensors, so the rules for those (VER-03) apply.
  bool consumer_parses_versioned = false;
  bool consumer = false;                ///< the adapter has a working from_dlpack
  DLPackVersion consumer_max{0, 0};
  std::string exchange_attr;            ///< "capsule", "int (v1.2)", "other", "" (absent)
  std::string dlpack_signature_note;    ///< what __dlpack__ did with max_version
  /// Why from_dlpack takes no CPU tensors: a package whose adapter declares no CPU device and
  /// whose from_dlpack refused a CPU producer at load without calling its __dlpack__ (CuPy).
  std::string cpu_refusal;
  /// Why the package is judged as one that never lends its storage (empty when it lends): asked
  /// copy=False of a plain CPU array it raised BufferError, and its default export of that
  /// array is a copy (another address; flagged IS_COPIED where versioned).
  std::string never_lends;
  /// Why the package imports nothing (empty when it imports): its from_dlpack refused the
  /// load check's producer without calling its __dlpack__, and refused a plain float32 CPU tensor
  /// too. Every import case is then a skip, and python.consumer.kw.any_object its one finding.
  std::string refuses_imports;
  /// Why the package exports nothing (empty when it exports): __dlpack__ refused a plain CPU
  /// array with BufferError, asked with and without max_version.
  std::string refuses_exports;
  /// An optional load check an earlier worker of this run died in, left out here
  /// (load_step_skipped): its fact is unknown, and the note says so.
  std::string check_left_out;
};

class PythonSubject final : public Subject {
 public:
  /// Needs the GIL (called by the loader, which holds it).
  PythonSubject(py::object adapter, std::string spec, int index);
  ~PythonSubject() override;

  const SubjectInfo& info() const override { return info_; }
  std::string refuses_device(DLDevice device) const override {
    return device.device_type == kDLCPU ? facts_.cpu_refusal : std::string();
  }
  std::string never_lends() const override { return facts_.never_lends; }
  int export_versioned(const DLPVRequest& req, DLManagedTensorVersioned** out) override;
  int export_legacy(const DLPVRequest& req, DLManagedTensor** out) override;
  int import_versioned(DLManagedTensorVersioned* t, void** out_array) override;
  int import_legacy(DLManagedTensor* t, void** out_array) override;
  int read_array(void* array, void* dst, size_t nbytes) override;
  int is_writable(void* array) override;
  void release_array(void* array) override;
  const DLPackExchangeAPI* exchange_api() override;
  std::string last_error() override;
  bool refused_by_validator() const override;
  std::string refusal_not_buffer_error() const override;
  std::optional<uintptr_t> last_source_address() const override;
  /// The adapter's optional `read_back` attribute (generic mode names its route there).
  std::string read_back_route() const override { return read_back_; }
  std::string image_path() const override;

  // ---- for Python-protocol cases (GIL held by the caller) ----------------------------
  py::object adapter() const { return adapter_; }
  const Facts& facts() const { return facts_; }
  const std::string& spec() const { return spec_; }
  /// adapter.make(...) on `device`, or on the home device when none is given;
  /// NotImplementedError -> throws NotImplemented with the text. `values` DLPV_VALUES_EDGE asks
  /// for the edge pattern (make's values="edge"): an adapter whose make() takes no values=
  /// keyword (one written before it) cannot be asked, a NotImplemented that says so.
  py::object make(const std::vector<int64_t>& shape, DLDataType dtype,
                  const std::string& layout = "contiguous", bool read_only = false,
                  std::optional<DLDevice> device = std::nullopt, int values = DLPV_VALUES_PLAIN);
  /// The first device the adapter declares (devices()): where the Python-protocol cases make
  /// their arrays and label their load checks' tensors. The CPU when the adapter declares none.
  DLDevice home_device() const override { return home_; }
  void reuse_sources(bool on) override;
  /// adapter.synchronize() where the adapter has one (dpnp: its SYCL queue's wait()).
  void settle() override;
  void after_case() override;
  /// The adapter's devices() as DLDevices ({CPU} when it has no devices()).
  const std::vector<DLDevice>& devices() const { return devices_; }
  /// from_dlpack through the adapter.
  py::object from_dlpack(py::handle obj, py::dict kwargs = py::dict());

  struct NotImplemented {
    std::string reason;
  };

 private:
  /// At load: what the package can do, in four steps (docs/adapters.md).
  void run_load_checks();
  bool check_devices();
  void check_producer();
  void check_consumer();
  void declare_capabilities();
  void check_cpu_refusal();
  void check_never_lends(py::handle x);
  py::object source_for(const DLPVRequest& req, const std::vector<int64_t>& shape);
  bool check_unasked_versioned();
  /// from_dlpack of a plain 2-element float32 CPU tensor (static storage) in a capsule of the
  /// kind asked: "" when imported, else the exception.
  std::string try_plain_import(bool versioned);
  py::object refusing_producer(DLDevice device);
  void set_error(const std::string& message);
  int import_common(void* managed, bool versioned, void** out_array);

  py::object adapter_;
  std::string read_back_;    ///< adapter.read_back, read once at load
  DLDevice home_{kDLCPU, 0};
  bool reuse_ = false;       ///< reuse_sources(): the last export's source array is exported again
  std::optional<bool> make_takes_values_;  ///< adapter.make has a values= keyword (read once)
  bool make_takes_values();
  std::string source_key_;   ///< the request that made source_
  py::object source_;
  std::optional<uintptr_t> source_address_;  ///< source_'s element 0, read once when it was made
  std::string unavailable_;  ///< why nothing can be exercised (the adapter declares no device)
  std::vector<DLDevice> devices_{DLDevice{kDLCPU, 0}};
  py::object exchange_type_;  ///< the array type carrying a __dlpack_c_exchange_api__ capsule
  std::string spec_;
  SubjectInfo info_;
  Facts facts_;
  std::string image_;
};

/// The PythonSubject behind a case, or a skip when the subject is of another kind.
PythonSubject& python_subject(CaseContext& ctx);

/// Loader for dlpv::worker_main / run_app (takes the GIL itself).
std::unique_ptr<Subject> load_python_subject(const std::string& spec, int index);

/// The standard-library functions the validator calls after the package is imported, taken
/// before it is (from the module's init): a package that replaces gc.freeze or json.dumps at
/// import cannot change what the validator does. Collections use the C API (PyGC_Collect).
void keep_stdlib_references();
void gc_freeze();
void gc_unfreeze();

/// "TypeName: message" of the Python exception in flight (GIL held).
std::string describe(const py::error_already_set& e);
/// The exception's type name ("BufferError").
std::string exception_type(const py::error_already_set& e);

/// Validator-side capsule helpers (GIL held).
std::string capsule_name(py::handle obj);  ///< "" if not a capsule; "<NULL>" if unnamed
void* capsule_pointer(py::handle obj);     ///< pointer under the capsule's own name, or null

/// The library's own element-0 address of an array, if it exposes one (__array_interface__,
/// __cuda_array_interface__, __sycl_usm_array_interface__ with its offset, data_ptr()).
std::optional<uintptr_t> library_address(py::handle x);

/// Element-0 address of a CPU tensor (data + byte_offset).
inline const void* element0(const DLTensor& t) {
  return static_cast<const char*>(t.data) + t.byte_offset;
}

}  // namespace dlpv::python
