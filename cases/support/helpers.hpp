// cases/support/helpers.hpp: the small vocabulary the case files share: building requests,
// exporting with the refusal rules applied, importing validator-made tensors.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/subject.hpp>
#include <dlpack_validate/tensor.hpp>

#include <functional>
#include <string>
#include <vector>

namespace dlpv::cases {

/// float32, the dtype of the plain cases (one definition for every case file, so the files can
/// share a unity build).
inline constexpr DLDataType kFloat32{kDLFloat, 32, 1};

/// A request plus the storage its shape pointer refers to.
struct Request {
  std::vector<int64_t> shape;
  DLPVRequest req{};
  Request(DLDataType dtype, std::vector<int64_t> shape, uint32_t layout, uint32_t flags = 0);
  // A copy's req.shape points at its own shape, never at the original's.
  Request(const Request& o) : shape(o.shape), req(o.req) { req.shape = shape.data(); }
  Request& operator=(const Request& o) {
    shape = o.shape;
    req = o.req;
    req.shape = shape.data();
    return *this;
  }
};

/// A tensor the subject exported; the validator calls its deleter exactly once (release()).
struct Exported {
  DLManagedTensorVersioned* v = nullptr;
  DLManagedTensor* l = nullptr;
  const DLTensor& tensor() const { return v ? v->dl_tensor : l->dl_tensor; }
  void release();
  ~Exported() { release(); }
  Exported() = default;
  Exported(Exported&& o) noexcept : v(o.v), l(o.l) { o.v = nullptr; o.l = nullptr; }
  Exported(const Exported&) = delete;
};

/// Export through export_versioned (versioned=true) or export_legacy. A clean
/// DLPV_UNSUPPORTED is a skip naming the request; DLPV_ERROR is a harness-visible error;
/// DLPV_OK with a NULL tensor is a failure of `requirement`.
Exported export_or_skip(CaseContext& ctx, bool versioned, const Request& r,
                        const char* requirement = "LAYOUT-01");

/// A refusal that came from the validator's adapter (it could not make the source array) is a
/// skip: nothing was asked of the library.
void skip_if_refused_by_validator(CaseContext& ctx, int rc);

/// Export with no refusal rules applied but the adapter's own (skip_if_refused_by_validator): the
/// return code, and on DLPV_OK the tensor in `e` (for cases where a refusal is itself the verdict).
int export_raw(CaseContext& ctx, bool versioned, const Request& r, Exported& e);

/// Why the subject is taken never to lend its storage ("copy otherwise"), or "". A Python
/// package: its load check (Subject::never_lends). A plugin: asked now, of `r` in a versioned
/// struct: its plain export is a copy flagged IS_COPIED and the same request with copy=False
/// (DLPV_REQ_NO_COPY) is refused cleanly.
std::string never_lends(CaseContext& ctx, const Request& r);

/// Inspect an export of `r` against what was asked (dtype, shape, layout, device; the
/// pattern) under the version the tensor or subject declares, and record the findings.
void inspect_export(CaseContext& ctx, const Exported& e, const Request& r, bool versioned);

/// The body of producer.tensor.* and producer.shape.*: export the case's dtype, layout and
/// shape in its struct kind, inspect it (inspect_export; versioned, its flags: FLAG-01) and
/// release it.
void export_inspect_release(CaseContext& ctx);

/// FLAG-01 (SHOULD) on a versioned export: no flag bit beyond those its version defines.
void check_defined_flags(CaseContext& ctx, const Exported& e);
/// The same for a versioned struct's version and flags read elsewhere (a Python capsule's);
/// `what`, when given, names the export in the message.
void check_defined_flags(CaseContext& ctx, DLPackVersion v, uint64_t flags, const std::string& what = "");

/// The requirement ids a well-formed export of `dtype` (and shape, layout, kind) rests on: the
/// dtype's own rule first, then the layout, device and version rules.
std::vector<std::string> export_requirements(DLDataType dtype, const std::string& shape, uint32_t layout,
                                             bool versioned);
/// Declare::each step: MUST the requirements export_requirements gives for the case's own
/// dtype, shape, layout and struct kind.
void declare_export_requirements(Declare& d);

/// FLAG-05 for a versioned export: a non-compact layout answered with compact strides is a copy,
/// which must carry IS_COPIED (called by inspect_export).
void check_copy_flagged(CaseContext& ctx, const Exported& e, const Request& r);

/// Heap growth (bytes) over `cycles` export + delete cycles of `r`, measured after a warm-up;
/// the loop records nothing itself, so only the library's allocations can grow. Failed
/// exports are counted in *failures. `held` (1 or 2): exports alive at once in each cycle.
long long export_delete_growth(CaseContext& ctx, bool versioned, const Request& r, int cycles,
                               int* failures, int warmup = 200, int held = 1);

/// DEL-01/DEL-11 by heap growth over export/delete cycles of `r` (export_delete_growth), judged
/// for `requirement`: a clean first look over a quarter of `cycles`, else the full count, and a
/// leak only where growth over the limit grows with the cycles (helpers.cpp says why).
/// `failures_are_errors`: an export that fails inside the loop is the harness's error.
/// `warmup`: cycles before each measurement, `held`: exports alive at once in each cycle
/// (export_delete_growth).
void judge_growth(CaseContext& ctx, bool versioned, const Request& r, int cycles, const char* requirement,
                  const std::string& what, bool failures_are_errors, int warmup = 200, int held = 1);

/// The judgement of judge_growth over any loop: `growth(n)` runs n cycles (after its own warm-up)
/// and returns the heap's growth over them in bytes. Python subjects' exports use it too.
/// `at_most`, where given, answers the first look first: a bound over n cycles that `growth(n)`
/// cannot exceed and costs less (the export loop alone, before what making the arrays grows the
/// heap by is measured and taken off); a bound under the clean limit passes there.
void judge_growth_by(CaseContext& ctx, int cycles, const char* requirement, const std::string& what,
                     const std::function<long long(int)>& growth,
                     const std::function<long long(int)>& at_most = nullptr);

/// How many export/delete cycles a leak loop over a tensor of `elements` elements of
/// `element_size` bytes takes (helpers.cpp says why): 2,000 for small tensors, down to 2.
int leak_cycles_for(long long elements, size_t element_size);

/// Import a validator-made tensor. Returns the array, or nullptr when the consumer refused
/// (return code in *rc).
/// `reaches`: the requirement a death during the import is charged to, when not the case's own.
void* import_made(CaseContext& ctx, MadeTensor& t, bool versioned, int* rc, const std::string& reaches = {});

/// Read an imported array back and compare with the expected bytes; records `requirement`.
/// `released` (the consumer called the deleter during import): the consumer claims a copy, so a
/// failed read or a mismatch also fails DEL-02 (it still uses the released tensor).
bool read_back_matches(CaseContext& ctx, void* array, const std::vector<uint8_t>& expected,
                       DLDataType dtype, const char* requirement, const std::string& what,
                       bool released = false);

/// Skip unless a CUDA driver and device `id` are present (the reason names what is missing).
void need_cuda(CaseContext& ctx, int32_t id);

/// "versioned" / "legacy" (to_string of the struct kind).
std::string kind_name(bool versioned);

/// An import's outcome in the words of the subject's user: a Python package's from_dlpack
/// returns an array or raises (BufferError is the clean refusal, ERR-07); a plugin returns a code
/// (DLPV_OK, DLPV_UNSUPPORTED). Results on a Python package never speak the plugin ABI.
bool speaks_python(CaseContext& ctx);
/// "BufferError" (a Python package) or "DLPV_UNSUPPORTED" (a plugin).
std::string clean_refusal(CaseContext& ctx);
/// "an array" (a Python package) or "DLPV_OK" (a plugin): what a successful import gives.
std::string imported(CaseContext& ctx);
/// "a capsule" (a Python package's __dlpack__) or "DLPV_OK" (a plugin): what a successful export gives.
std::string exported(CaseContext& ctx);
/// A refusal as observed: the exception (a Python package's last_error names it) or "return RC: ERROR".
std::string refusal_seen(CaseContext& ctx, int rc, const std::string& error);

/// The rule's own float32 3x4 case (not one of its samples).
bool plain_float32_3x4(const CaseContext& ctx);

/// The request a rule case makes: its dtype and shape (float32 3x4 when it declares none).
Request sample_request(CaseContext& ctx, uint32_t layout = DLPV_LAYOUT_CONTIGUOUS, uint32_t flags = 0);

/// The elements of an export, row-major compact (sub-byte packed), read defensively; a
/// versioned tensor flagged IS_SUBBYTE_TYPE_PADDED is read padded.
bool gather_export(const Exported& e, std::vector<uint8_t>& out, std::string& why);

}  // namespace dlpv::cases
