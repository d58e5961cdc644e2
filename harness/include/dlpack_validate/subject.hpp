// harness/include/dlpack_validate/subject.hpp: the one interface every case talks to. A
// subject is a library under test: a plugin .so today, a Python package through the shim.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/plugin.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dlpv {

/// Capabilities a case can need; the names are the plugin table's member names, plus
/// "copy_keyword": the producer can be told copy=True / copy=False (the plugin request's
/// DLPV_REQ_COPY / DLPV_REQ_NO_COPY; a Python __dlpack__ with the 2023.12 copy= keyword);
/// "consumer_protocol": a Python package's from_dlpack takes any object with __dlpack__ (not only
/// a capsule), so the keywords, streams and call order it uses are its own.
inline constexpr const char* kCapabilities[] = {
    "export_versioned", "export_legacy", "import_versioned", "import_legacy", "read_array",
    "is_writable",      "release_array", "exchange_api",     "copy_keyword",  "consumer_protocol",
    // Of the machine, not the library: a CUDA driver with a device. The worker that describes
    // the subjects checks it once; where a description does not say (a lazy worker's, or
    // --isolate=none), the case body decides (need_cuda).
    "cuda_driver"};

struct SubjectInfo {
  int index = 0;
  std::string kind;  ///< "plugin"
  std::string path;
  std::string name;
  DLPackVersion dlpack_version{0, 0};
  std::vector<std::string> capabilities;
  std::vector<std::string> notes;
  /// Why a capability is absent, in words a skip can quote (optional; the hello carries it, so
  /// the supervisor words the skips it decides itself as the worker would).
  std::map<std::string, std::string> absent;
  /// Why the DLPack versions it speaks could not be probed ("" when they were): a package that
  /// can make no array here (CuPy on a machine without a GPU) is not therefore legacy-only.
  std::string version_unknown;

  /// Probed, and neither exports nor imports a DLPack tensor (ndonnx 0.23: every __dlpack__
  /// and every from_dlpack refused): it speaks no DLPack, which is not "legacy-only".
  bool speaks_none() const;
  bool legacy_only() const { return version_unknown.empty() && dlpack_version.major < 1 && !speaks_none(); }
  bool has(const std::string& capability) const;
  std::string version_text() const;
  /// What the subject speaks, for its line in every report: "DLPack 1.3", "DLPack 0.x,
  /// legacy-only", "DLPack 1.1, no DLPack import", "no DLPack import or export", "DLPack versions
  /// not probed: ...".
  std::string speaks() const;
};

class Subject {
 public:
  virtual ~Subject() = default;
  virtual const SubjectInfo& info() const = 0;

  virtual int export_versioned(const DLPVRequest& req, DLManagedTensorVersioned** out) = 0;
  virtual int export_legacy(const DLPVRequest& req, DLManagedTensor** out) = 0;
  virtual int import_versioned(DLManagedTensorVersioned* t, void** out_array) = 0;
  virtual int import_legacy(DLManagedTensor* t, void** out_array) = 0;
  virtual int read_array(void* array, void* dst, size_t nbytes) = 0;
  virtual int is_writable(void* array) = 0;
  virtual void release_array(void* array) = 0;
  virtual const DLPackExchangeAPI* exchange_api() = 0;
  virtual std::string last_error() = 0;
  /// File whose image must contain static objects of the library (exchange-API table).
  virtual std::string image_path() const = 0;
  /// True when the last refusal (DLPV_UNSUPPORTED) came from the validator's side, not from the
  /// library under test: its Python adapter cannot make the source array, or the request carries
  /// a bit a plugin does not declare (dlpv_request_flags). Such a refusal is a skip, never a
  /// verdict on the library; last_error() says which.
  virtual bool refused_by_validator() const { return false; }
  /// Non-empty (the evidence, in words) for a producer that never lends its storage: every
  /// export is a copy and copy=False is refused. The array API (__dlpack__, copy): None "must
  /// reuse the existing memory buffer if possible and copy otherwise", so such a producer is
  /// judged by "copy otherwise" (IS_COPIED set, copy=False refused with BufferError).
  virtual std::string never_lends() const { return {}; }
  /// Why this subject's consumer takes no tensors on `device`, as its load checks found it
  /// (a CUDA-only library refusing host memory); "" when nothing was found. Consumer cases on
  /// such a device are skips that say so: DEV-04 allows the refusal.
  virtual std::string refuses_device(DLDevice device) const {
    (void)device;
    return "";
  }
  /// Where the subject's own arrays live, as it reports them (a Python package: its adapter's
  /// first device, probed at load; a plugin: the CPU). A case that asks for a plain host array
  /// (the kCpu0 cases) gets one on this device instead, and is judged against it: a library
  /// whose arrays live on a SYCL device is never charged for not being the CPU.
  virtual DLDevice home_device() const { return DLDevice{kDLCPU, 0}; }
  /// While on, an export request equal to the previous one exports the same source array again
  /// instead of making a new one (a Python package makes a source array per request; a plugin
  /// makes its tensor inside its exporter and ignores this). Heap measurements of export/delete
  /// cycles (DEL-01, DEL-11) turn it on, so that what they measure is the export and its deleter,
  /// not the making of source arrays.
  virtual void reuse_sources(bool on) { (void)on; }
  /// When the last export was refused (DLPV_UNSUPPORTED) by the library with an exception other
  /// than BufferError, that exception ("Type: message"); else empty. The array API's __dlpack__
  /// raises "BufferError: when the data cannot be exported as DLPack" (ERR-01, should). A
  /// plugin's refusal is a return code: always empty.
  virtual std::string refusal_not_buffer_error() const { return {}; }
  /// Element 0's address in the array the last export was asked of, as the library states it
  /// (a Python package's array interface or data_ptr()), so that a copy can be told from a view
  /// (KW-03); none for a plugin, whose source is made inside its exporter, or for a package
  /// that states no address.
  virtual std::optional<uintptr_t> last_source_address() const { return std::nullopt; }
  /// How an imported array is read back, when that way goes through the library's own export
  /// (generic mode: the array's __dlpack__), so that a consumer case's wrong elements can say
  /// the fault may be the export's; empty where the read-back is the subject's own (a plugin's
  /// read_array, an adapter's to_bytes).
  virtual std::string read_back_route() const { return {}; }
  /// Waits for the work the library has queued and not yet finished (a SYCL queue's tasks,
  /// whose completion frees their memory on the runtime's own threads), so that a heap reading
  /// after it counts what the library keeps, not what it is about to free. A synchronisation
  /// the library offers, never a sleep; a plugin has nothing queued.
  virtual void settle() {}
  /// Called at the end of every case whose body ran, in the case's own phase "cleanup": releases
  /// what the case left behind (a Python package's unreachable objects are collected), so that
  /// a library crashing as its objects die is charged to the case that made them, never to
  /// whichever later case happens to trigger the collection.
  virtual void after_case() {}
};

/// The device a case's request means on `subject`: a plain host request (kDLCPU 0) is the
/// subject's home device; any other device is asked as it is.
inline DLDevice case_device(const Subject& subject, DLDevice asked) {
  return asked.device_type == kDLCPU && asked.device_id == 0 ? subject.home_device() : asked;
}

/// Makes a subject from what the user named (a .so path, a Python package name ...).
/// Throws SubjectLoadError. Runs in worker processes only (and with --isolate=none).
using SubjectLoader = std::function<std::unique_ptr<Subject>(const std::string& spec, int index)>;

/// Thrown when a subject cannot be loaded; `bad_input` errors become exit code 2.
struct SubjectLoadError {
  std::string message;
};

/// Loaders announce the step they are in ("dlopen", "entry", "import", "load_check.export",
/// "load_check.capsule_destructor", "load_check.consumer") so that a worker that dies while loading is
/// charged to that step (and to the requirement it breaks) rather than to a case. The worker
/// sets the hook; without one the calls do nothing.
using LoadStepHook = void (*)(const char* step);
void set_load_step_hook(LoadStepHook hook);
void load_step(const char* step);

/// An optional load step (a load check that only decides a fact, such as "load_check.consumer_versioned")
/// that killed an earlier worker of this run: the supervisor names it in the worker's
/// environment (kSkipStepsVar, comma separated), and the loader leaves it out, so that the
/// release's cases still run. The death itself is reported once, as `subject.load`.
inline constexpr const char* kSkipStepsVar = "DLPV_WORKER_SKIP_STEPS";
bool load_step_skipped(const char* step);

}  // namespace dlpv
