// cases/support/helpers.cpp
// SPDX-License-Identifier: Apache-2.0
#include "helpers.hpp"

#include <dlpack_validate/cuda.hpp>
#include <fmt/format.h>

#include <algorithm>

namespace dlpv::cases {

Request::Request(DLDataType dtype, std::vector<int64_t> s, uint32_t layout, uint32_t flags)
    : shape(std::move(s)) {
  req.struct_size = sizeof(DLPVRequest);
  req.dtype = dtype;
  req.device = DLDevice{kDLCPU, 0};
  req.ndim = static_cast<int32_t>(shape.size());
  req.shape = shape.data();
  req.layout = layout;
  req.flags = flags;
  req.max_version = DLPackVersion{DLPV_DLPACK_MAJOR, DLPV_DLPACK_MINOR};
  req.stream = DLPV_NO_STREAM;
  req.target_device = DLDevice{static_cast<DLDeviceType>(0), 0};
}

void Exported::release() {
  call_deleter(v, true);
  call_deleter(l, false);
  v = nullptr;
  l = nullptr;
}

std::string kind_name(bool versioned) { return to_string(versioned ? StructKind::versioned : StructKind::legacy); }

void need_cuda(CaseContext& ctx, int32_t id) {
  std::string why;
  if (!cuda::available(&why)) ctx.skip(why);
  if (id >= cuda::device_count())
    ctx.skip(fmt::format("only {} CUDA device(s); cuda:{} is absent", cuda::device_count(), id));
}

bool plain_float32_3x4(const CaseContext& ctx) {
  const auto& v = ctx.values();
  return v.shape == "3x4" && v.dtype && dtype_name(*v.dtype) == "float32";
}

Request sample_request(CaseContext& ctx, uint32_t layout, uint32_t flags) {
  const DLDataType dtype = ctx.values().dtype.value_or(DLDataType{kDLFloat, 32, 1});
  return Request(dtype, shape_named(ctx.shape_name()), layout, flags);
}

bool gather_export(const Exported& e, std::vector<uint8_t>& out, std::string& why) {
  const bool padded = e.v && element_bytes(e.v->dl_tensor.dtype) == 0 &&
                      (e.v->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  return gather_elements(e.tensor(), out, why, padded);
}

void check_defined_flags(CaseContext& ctx, const Exported& e) { check_defined_flags(ctx, e.v->version, e.v->flags); }

void check_defined_flags(CaseContext& ctx, DLPackVersion v, uint64_t flags, const std::string& what) {
  const uint64_t defined = (v.major == 1 && v.minor >= 1) ? 0x7u : 0x3u;
  ctx.check_as(Severity::should, (flags & ~defined) == 0, "FLAG-01",
               fmt::format("flags use only bits defined for DLPack {}.{}{}", v.major, v.minor, what.empty() ? "" : ": " + what),
               fmt::format("flags & ~{:#x} == 0", defined), fmt::format("flags = {:#x}", flags));
}

void export_inspect_release(CaseContext& ctx) {
  Request r(ctx.dtype(), shape_named(ctx.shape_name()), ctx.layout());
  Exported e = export_or_skip(ctx, ctx.versioned(), r);
  inspect_export(ctx, e, r, ctx.versioned());
  if (ctx.versioned()) check_defined_flags(ctx, e);
  // The case calls the deleter on its own thread without the GIL: for a Python producer a
  // death there is DEL-06's ("the deleter can be called from any thread without the caller
  // holding the GIL"; it must take the GIL itself if it touches Python).
  ctx.phase("deleter", ctx.subject().info().kind == "python" ? "DEL-06" : "");
  e.release();
}

std::vector<std::string> export_requirements(DLDataType t, const std::string& shape, uint32_t layout,
                                             bool versioned) {
  std::vector<std::string> reqs = {"LAYOUT-05", "LAYOUT-01", "LAYOUT-04", "LAYOUT-07", "DTYPE-01", "DTYPE-03", "DEV-02", "DEV-03"};
  if (t.code == DLPV_CODE_BOOL) reqs.insert(reqs.begin(), "DTYPE-11");
  else if (t.code == DLPV_CODE_COMPLEX) reqs.insert(reqs.begin(), "DTYPE-10");
  else if (t.code >= DLPV_CODE_FLOAT8_E3M4 && t.code <= DLPV_CODE_FLOAT8_E8M0FNU) reqs.insert(reqs.begin(), "DTYPE-13");
  else if (t.code == DLPV_CODE_BCOMPLEX) reqs.insert(reqs.begin(), "DTYPE-01");
  else if (t.code >= DLPV_CODE_FLOAT6_E2M3FN) {
    reqs.insert(reqs.begin(), "DTYPE-07");
    reqs.insert(reqs.begin(), "DTYPE-05");
  } else reqs.push_back("DTYPE-02");
  if (shape == "empty") reqs.insert(reqs.begin(), "LAYOUT-10");
  if (versioned) reqs.push_back("VER-02");
  if (versioned) reqs.push_back("FLAG-01");
  if (versioned && layout != DLPV_LAYOUT_CONTIGUOUS && layout != DLPV_LAYOUT_OFFSET) reqs.push_back("FLAG-05");
  return reqs;
}

void declare_export_requirements(Declare& d) {
  const CaseParams& v = d.info().values;
  d.must(export_requirements(*v.dtype, v.shape.empty() ? "3x4" : v.shape, v.layout.value_or(DLPV_LAYOUT_CONTIGUOUS),
                             v.kind == StructKind::versioned));
}

void inspect_export(CaseContext& ctx, const Exported& e, const Request& r, bool versioned) {
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = r.req.dtype;
  want.shape = r.shape;
  want.layout = r.req.layout;
  want.values = (r.req.flags & DLPV_REQ_EDGE_VALUES) ? DLPV_VALUES_EDGE : DLPV_VALUES_PLAIN;
  want.device = case_device(ctx.subject(), r.req.device);  // a host request: the subject's own device
  InspectOptions opt;
  opt.versioned = versioned;
  opt.version = versioned ? e.v->version : ctx.subject().info().dlpack_version;
  opt.padded_subbyte = versioned && element_bytes(r.req.dtype) == 0 &&
                       (e.v->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) != 0;
  std::vector<Finding> findings;
  inspect_tensor(e.tensor(), want, opt, findings);
  record(ctx, findings);
  if (versioned) check_copy_flagged(ctx, e, r);
}

namespace {
// Strides equal where the extent makes them matter (a dimension of extent 0 or 1 may carry any).
bool same_strides(const std::vector<int64_t>& a, const std::vector<int64_t>& b, const std::vector<int64_t>& shape) {
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1 && a[i] != b[i]) return false;
  return true;
}
}  // namespace

// FLAG-05: the request asked for a view whose strides are not compact (fortran, strided,
// reversed, broadcast); a tensor that comes back compact row-major holding the right values is
// a copy the producer made, and dlpack.h defines IS_COPIED as "the tensor is a copy made by the
// producer"; the array API: "When a copy happens, the DLPACK_FLAG_BITMASK_IS_COPIED flag must
// be set."
void check_copy_flagged(CaseContext& ctx, const Exported& e, const Request& r) {
  const std::vector<int64_t> asked = canonical_strides(r.req.layout, r.shape);
  const std::vector<int64_t> compact = canonical_strides(DLPV_LAYOUT_CONTIGUOUS, r.shape);
  if (same_strides(asked, compact, r.shape) || !e.v) return;
  DLTensor t{};
  if (!safe_read(&e.v->dl_tensor, &t, sizeof t) || t.ndim != static_cast<int32_t>(r.shape.size())) return;
  std::vector<int64_t> got(r.shape.size());
  if (t.strides && !safe_read(t.strides, got.data(), got.size() * sizeof(int64_t))) return;
  if (!t.strides) got = compact;
  if (!same_strides(got, compact, r.shape)) return;
  ctx.check_as(Severity::must, (e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05",
               fmt::format("{} request answered with compact row-major strides is a copy made by the producer: "
                           "IS_COPIED must be set", with_article(layout_name(r.req.layout))),
               "bit 1 set", fmt::format("flags = {:#x}, strides {}", e.v->flags,
                                        shape_text(got)));
}

int export_raw(CaseContext& ctx, bool versioned, const Request& r, Exported& e) {
  ctx.phase("export");
  DLManagedTensorVersioned* v = nullptr;
  DLManagedTensor* l = nullptr;
  const int rc = versioned ? ctx.subject().export_versioned(r.req, &v) : ctx.subject().export_legacy(r.req, &l);
  e.v = rc == DLPV_OK ? v : nullptr;
  e.l = rc == DLPV_OK ? l : nullptr;
  skip_if_refused_by_validator(ctx, rc);
  return rc;
}

std::string never_lends(CaseContext& ctx, const Request& r) {
  if (ctx.subject().info().kind == "python") return ctx.subject().never_lends();
  Request plain = r;
  plain.req.flags &= ~static_cast<uint32_t>(DLPV_REQ_COPY | DLPV_REQ_NO_COPY);
  Exported p;
  if (ctx.subject().export_versioned(plain.req, &p.v) != DLPV_OK || !p.v ||
      !(p.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED))
    return {};
  const uint64_t flags = p.v->flags;
  Request lend = plain;
  lend.req.flags |= DLPV_REQ_NO_COPY;
  Exported q;
  const int rc = ctx.subject().export_versioned(lend.req, &q.v);
  if (rc != DLPV_UNSUPPORTED || ctx.subject().refused_by_validator()) return {};
  return fmt::format("its plain export is a copy flagged IS_COPIED (flags = {:#x}) and copy=False is refused "
                     "(return {}: {})", flags, rc, ctx.subject().last_error());
}

void skip_if_refused_by_validator(CaseContext& ctx, int rc) {
  // The validator's adapter could not make the source array: nothing was asked of the library.
  if (rc == DLPV_UNSUPPORTED && ctx.subject().refused_by_validator())
    ctx.skip("not asked of the library: " + ctx.subject().last_error());
}

Exported export_or_skip(CaseContext& ctx, bool versioned, const Request& r, const char* requirement) {
  Exported e;
  ctx.phase("export");
  int rc = versioned ? ctx.subject().export_versioned(r.req, &e.v)
                     : ctx.subject().export_legacy(r.req, &e.l);
  const std::string what = fmt::format("{} {} {}", dtype_name(r.req.dtype),
                                       shape_text(r.shape), layout_name(r.req.layout));
  // A Python package's refusal with another exception than BufferError: the array API's
  // __dlpack__ "Raises: BufferError: when the data cannot be exported as DLPack (e.g.,
  // incompatible dtype, strides, or device)" (ERR-01, should). The refusal itself is the
  // package's to make.
  if (rc == DLPV_UNSUPPORTED && speaks_python(ctx) && !ctx.subject().refusal_not_buffer_error().empty()) {
    ctx.check_as(Severity::should, false, "ERR-01",
                 fmt::format("__dlpack__ refuses with BufferError what it does not export (the array API, __dlpack__ "
                             "Raises): the {} export of {}", kind_name(versioned), what),
                 "a capsule, or BufferError", ctx.subject().refusal_not_buffer_error());
    ctx.stop();
  }
  if (rc == DLPV_UNSUPPORTED)
    ctx.skip(speaks_python(ctx) ? fmt::format("no {} export of {}: {}", kind_name(versioned), what,
                                              ctx.subject().last_error())
                                : fmt::format("subject refused {} export of {} cleanly (DLPV_UNSUPPORTED): {}",
                                              kind_name(versioned), what, ctx.subject().last_error()));
  if (rc != DLPV_OK)
    ctx.harness_error(fmt::format("{} export of {} failed (return {}): {}", kind_name(versioned), what,
                                  rc, ctx.subject().last_error()));
  ctx.check(versioned ? e.v != nullptr : e.l != nullptr, requirement,
            "a successful export returns a managed tensor", "non-NULL pointer", "NULL");
  if (!e.v && !e.l) ctx.stop();
  return e;
}

long long export_delete_growth(CaseContext& ctx, bool versioned, const Request& r, int cycles,
                               int* failures, int warmup, int held) {
  size_t before = 0;
  *failures = 0;
  // One source array for every cycle (a Python package would make a new one per export): the
  // loop measures the export and its deleter, nothing else.
  struct Reuse {
    Subject& s;
    explicit Reuse(Subject& subject) : s(subject) { s.reuse_sources(true); }
    ~Reuse() { s.reuse_sources(false); }
  } reuse(ctx.subject());
  for (int i = 0; i < warmup + cycles; ++i) {
    if (i == warmup) {
      ctx.subject().settle();
      before = heap_in_use();
    }
    // `held` exports alive at once each cycle (an input exported again while the first lives),
    // deleted in the reverse order.
    DLManagedTensorVersioned* v[2] = {nullptr, nullptr};
    DLManagedTensor* l[2] = {nullptr, nullptr};
    const int n = std::clamp(held, 1, 2);
    for (int k = 0; k < n; ++k) {
      const int rc = versioned ? ctx.subject().export_versioned(r.req, &v[k]) : ctx.subject().export_legacy(r.req, &l[k]);
      if (rc != DLPV_OK || (!v[k] && !l[k])) ++*failures;
    }
    for (int k = n; k-- > 0;) {
      call_deleter(v[k], true);
      call_deleter(l[k], false);
    }
  }
  ctx.subject().settle();
  return static_cast<long long>(heap_in_use()) - static_cast<long long>(before);
}

// Heap growth over export/delete cycles of `r`, judged for `requirement`: a leak grows with the
// cycles. A first look over a quarter of `cycles` settles the clean case: under 4 KiB there
// (under 4 bytes a cycle) the full count could not reach the 64 KiB limit. Anything more is
// measured over the full count: a runtime that frees in batches later (dpnp's SYCL queue grows
// the heap past 64 KiB over 1,000 copy=True cycles, and over 2,000 half as much again) shows its
// plateau only there. Growth over the limit is measured again over twice the cycles, and only growth that
// grows with them (at least 1.5 times as much) in two such windows running is a leak: memory an
// asynchronous runtime frees later on its own threads (a SYCL queue's finished tasks) does not,
// nor does a pool's one step.
// `failures_are_errors`: an export that fails inside the loop is the harness's error (DEL-01);
// otherwise later refusals only shorten the loop (DEL-11: a refused copy is a skip before it).
void judge_growth(CaseContext& ctx, bool versioned, const Request& r, int cycles, const char* requirement,
                  const std::string& what, bool failures_are_errors, int warmup, int held) {
  int failures = 0;
  judge_growth_by(ctx, cycles, requirement, what, [&](int n) {
    const long long g = export_delete_growth(ctx, versioned, r, n, &failures, warmup, held);
    if (failures && failures_are_errors)
      ctx.harness_error(fmt::format("{} exports failed during the leak loop: {}", failures, ctx.subject().last_error()));
    return g;
  });
}

// Export/delete cycles of a tensor: as many as keep a leak of the whole export (data included)
// to about 64 MiB over judge_growth's first three measurements (a quarter of the cycles, all of them,
// twice as many, each after a warm-up of a quarter: about four times the count in all; a leak's
// second window of twice the count takes it to about 96 MiB), and the
// elements filled to about 16 Mi: 2,000 for small tensors (a leak of 33 bytes a cycle crosses
// judge_growth's 64 KiB; a managed struct alone is 64 or more), 4 for a rank-4 export of 1 Mi
// elements and 2 when those are 8 MiB or more (a leak of its data grows the heap by megabytes a
// cycle, far past the limit). With a floor of 8 cycles, a leaking float64 export of that size
// took 33 exports and 264 MiB, and on a busy runner its case outlived twice its time limit.
int leak_cycles_for(long long elements, size_t element_size) {
  elements = std::max<long long>(1, elements);
  const long long bytes = std::max<long long>(256, elements * static_cast<long long>(std::max<size_t>(1, element_size)));
  return static_cast<int>(std::clamp<long long>(std::min((64LL << 20) / (4 * bytes), (4LL << 20) / elements), 2, 2000));
}

void judge_growth_by(CaseContext& ctx, int cycles, const char* requirement, const std::string& what,
                     const std::function<long long(int)>& measure, const std::function<long long(int)>& at_most) {
  constexpr long long kLimit = 64 * 1024;
  constexpr long long kClean = kLimit / 16;
  const int look = std::max(1, cycles / 4);
  // A clean run passes at the first look or over the full count, as the heap happens to lie
  // (an allocator's thresholds move): one message for both, so the record does not depend on it.
  auto pass = [&] {
    ctx.check(true, requirement, fmt::format("heap growth over {} {}", cycles, what),
              "< 4 KiB over the first quarter of the cycles, or < 64 KiB over all of them");
  };
  if (at_most && at_most(look) < kClean) {
    pass();
    return;
  }
  long long growth = measure(look);
  if (growth < kClean) {
    pass();
    return;
  }
  growth = measure(cycles);
  if (growth < kLimit) {
    pass();
    return;
  }
  auto grew = [&](long long reading) { return reading >= kLimit && reading * 2 >= growth * 3; };
  const long long again = measure(2 * cycles);
  bool grows = grew(again);
  // A leak grows in every window; a runtime's pools grow by steps that come once. dpnp 0.20.0's
  // SYCL runtime, beside two other dpnp tests on two cores, grew the heap by 150 KiB over 4,000
  // copy=True cycles and then by 640 KiB over 8,000, where its other runs read 0.5 to 15 KiB over
  // the 8,000 (and a script read steps of 40 to 100 KiB at 1,000 to 13,000 cycles, none after):
  // a growth that grew with the cycles is a leak only if a second window of twice the cycles
  // grows as much again.
  long long confirm = 0;
  if (grows) {
    confirm = measure(2 * cycles);
    grows = grew(confirm);
    if (!grows)
      ctx.note(fmt::format("{} bytes over {} cycles, then {} over {}, then {} over {} again: a step that did not "
                           "come again, so the runtime's pools growing, not a leak", growth, cycles, again,
                           2 * cycles, confirm, 2 * cycles));
  } else {
    ctx.note(fmt::format("{} bytes over {} cycles, then {} over {}: not growing with the cycles, so memory "
                         "released later, not a leak", growth, cycles, again, 2 * cycles));
  }
  ctx.check(!grows, requirement,
            fmt::format("heap growth over {} {} (measured again over {} cycles: a leak grows with them)", cycles,
                        what, 2 * cycles),
            "< 64 KiB, or not growing with the cycles",
            fmt::format("{} bytes ({:.1f} per cycle), then {} and {} bytes over {} cycles each", growth,
                        static_cast<double>(growth) / cycles, again, confirm, 2 * cycles));
}

bool speaks_python(CaseContext& ctx) { return ctx.subject().info().kind != "plugin"; }

std::string clean_refusal(CaseContext& ctx) { return speaks_python(ctx) ? "BufferError" : "DLPV_UNSUPPORTED"; }

std::string imported(CaseContext& ctx) { return speaks_python(ctx) ? "an array" : "DLPV_OK"; }

std::string exported(CaseContext& ctx) { return speaks_python(ctx) ? "a capsule" : "DLPV_OK"; }

std::string refusal_seen(CaseContext& ctx, int rc, const std::string& error) {
  if (speaks_python(ctx)) return error.empty() ? std::string("refused (no message)") : error;
  return fmt::format("return {}: {}", rc, error);
}

void* import_made(CaseContext& ctx, MadeTensor& t, bool versioned, int* rc, const std::string& reaches) {
  void* array = nullptr;
  const std::string refused = ctx.subject().refuses_device(t.spec().device);
  if (!refused.empty()) ctx.skip(refused);
  ctx.phase("import", reaches, guard_meaning(t.spec(), versioned));
  *rc = versioned ? ctx.subject().import_versioned(t.versioned(), &array)
                  : ctx.subject().import_legacy(t.legacy(), &array);
  return *rc == DLPV_OK ? array : nullptr;
}

bool read_back_matches(CaseContext& ctx, void* array, const std::vector<uint8_t>& expected,
                       DLDataType dtype, const char* requirement, const std::string& what, bool released) {
  ctx.phase("read");
  std::vector<uint8_t> got(expected.size(), 0xEE);
  int rc = ctx.subject().read_array(array, got.data(), got.size());
  if (rc == DLPV_UNSUPPORTED)  // the adapter cannot read this array back (not the library's fault)
    ctx.skip("the imported array cannot be read back here: " + ctx.subject().last_error());
  if (rc != DLPV_OK) {
    // The import claimed success, so an array that cannot even be read is the consumer's failure.
    ctx.check(false, requirement, "the imported array can be read back: " + what, "its elements",
              fmt::format("reading it failed (return {}): {}", rc, ctx.subject().last_error()));
    ctx.stop();
  }
  std::string diff = describe_mismatch(dtype, expected, got);
  // A consumer that released the tensor during import and reads 0xDB (the poison the deleter
  // leaves) still views the released memory.
  const bool poison = !diff.empty() && !got.empty() &&
                      std::count(got.begin(), got.end(), uint8_t{0xDB}) * 2 >= static_cast<long>(got.size());
  if (released && poison)
    ctx.check_as(Severity::must, false, "DEL-02",
                 "the consumer called the deleter during import but still uses the released tensor (poisoned by the deleter)",
                 "its own copy of the elements", diff);
  // Generic mode reads the import back through the package's own export: the package is the
  // party either way, but the rule may be a producer's, and the finding says so.
  const std::string route = diff.empty() ? std::string() : ctx.subject().read_back_route();
  // Wrong elements fail as MUST on every dtype, layout and route: a rule may let a consumer
  // refuse a tensor (a SHOULD about the refusal), never misread one it took.
  return ctx.check_as(Severity::must, diff.empty(), requirement, route.empty() ? what : what + " (" + route + ")",
                      "the reference pattern", diff);
}

}  // namespace dlpv::cases
