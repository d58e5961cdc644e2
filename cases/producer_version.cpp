// cases/producer_version.cpp: what a versioned export declares: major version, strides by
// declared version, flag bits (VER-01, LAYOUT-02, FLAG-01, FLAG-02, FLAG-05), each rule on
// float32 3x4 and on every rule sample (0-d, empty, size-1, ndim 3, byte-sized, bool,
// complex, fp8, sub-byte).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLDataType kFloat32{kDLFloat, 32, 1};

void version_major(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "VER-01");
  ctx.phase("inspect");
  ctx.check(e.v->version.major == 1, "VER-01", "a versioned tensor declares major version 1",
            "1.x", fmt::format("{}.{}", e.v->version.major, e.v->version.minor));
  const DLPackVersion declared = ctx.subject().info().dlpack_version;
  ctx.check_as(Severity::may, e.v->version.major != declared.major || e.v->version.minor <= declared.minor,
               "VER-02", "the tensor's version does not exceed the version the library declares",
               fmt::format("<= {}.{}", declared.major, declared.minor),
               fmt::format("{}.{}", e.v->version.major, e.v->version.minor));
}

void strides_non_null(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "LAYOUT-02");
  ctx.phase("inspect");
  const DLPackVersion v = e.v->version;
  const bool v12 = v.major == 1 && v.minor >= 2;
  if (r.shape.empty()) {
    // dlpack.h 1.3: strides "can be NULL" when ndim == 0.
    ctx.check(true, "LAYOUT-02", e.v->dl_tensor.strides ? "a 0-d tensor with non-NULL strides"
                                                        : "a 0-d tensor may carry NULL strides");
  } else if (e.v->dl_tensor.strides) {
    ctx.check(true, "LAYOUT-02", "strides are non-NULL for ndim > 0");
  } else if (v12) {
    ctx.check(false, "LAYOUT-02", "a tensor declaring DLPack >= 1.2 must carry strides when ndim > 0",
              fmt::format("strides[{}]", r.shape.size()), fmt::format("NULL (declares {}.{})", v.major, v.minor));
  } else {
    ctx.check_as(Severity::may, true, "LAYOUT-02",
                 fmt::format("NULL strides allowed for a {}.{} tensor (deprecated from 1.2)", v.major, v.minor));
  }
}

void flags_defined(CaseContext& ctx) {
  Request r = sample_request(ctx);
  Exported e = export_or_skip(ctx, true, r, "FLAG-01");
  ctx.phase("inspect");
  const DLPackVersion v = e.v->version;
  const uint64_t defined = (v.major == 1 && v.minor >= 1) ? 0x7u : 0x3u;
  ctx.check((e.v->flags & ~defined) == 0, "FLAG-01",
            fmt::format("flags use only bits defined for DLPack {}.{}", v.major, v.minor),
            fmt::format("flags & ~{:#x} == 0", defined), fmt::format("flags = {:#x}", e.v->flags));
  const bool sub_byte = e.v->dl_tensor.dtype.bits < 8;
  ctx.check_as(Severity::must, sub_byte || (e.v->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) == 0,
               "FLAG-07", "IS_SUBBYTE_TYPE_PADDED is only set on sub-byte dtypes",
               "bit 2 clear for " + dtype_name(r.req.dtype), fmt::format("flags = {:#x}", e.v->flags));

  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) == 0, "FLAG-06",
            "IS_COPIED is clear for a plain zero-copy export", "bit 1 clear",
            fmt::format("flags = {:#x}", e.v->flags));
}

void flags_read_only(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_READ_ONLY);
  Exported e = export_or_skip(ctx, true, r, "FLAG-02");
  ctx.phase("inspect");
  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0, "FLAG-02",
            "a read-only source array is exported with READ_ONLY set", "bit 0 set",
            fmt::format("flags = {:#x}", e.v->flags));
}

void flags_is_copied(CaseContext& ctx) {
  Request r = sample_request(ctx, DLPV_LAYOUT_CONTIGUOUS, DLPV_REQ_COPY);
  Exported e = export_or_skip(ctx, true, r, "FLAG-05");
  ctx.phase("inspect");
  ctx.check((e.v->flags & DLPACK_FLAG_BITMASK_IS_COPIED) != 0, "FLAG-05",
            "an export made as a copy (copy=True) sets IS_COPIED", "bit 1 set",
            fmt::format("flags = {:#x}", e.v->flags));
}

// max_version at, below-minor and above the producer's own version: always a versioned
// tensor of major 1, never a refusal (VER-07).
void max_version(CaseContext& ctx) {
  Request r(kFloat32, {3, 4}, DLPV_LAYOUT_CONTIGUOUS);
  const std::string& mv = ctx.param("max_version");
  r.req.max_version = mv == "1.0" ? DLPackVersion{1, 0} : mv == "1.99" ? DLPackVersion{1, 99} : DLPackVersion{2, 0};
  DLManagedTensorVersioned* out = nullptr;
  ctx.phase("export");
  int rc = ctx.subject().export_versioned(r.req, &out);
  Exported e;
  e.v = out;
  if (!ctx.check(rc == DLPV_OK && out, "VER-07",
                 fmt::format("a consumer max_version of {} gets a versioned tensor, not a refusal", mv),
                 "DLPV_OK", fmt::format("return {}: {}", rc, ctx.subject().last_error())))
    return;
  ctx.check(out->version.major == 1, "VER-07", "the tensor carries the producer's own major (1)", "1.x",
            fmt::format("{}.{}", out->version.major, out->version.minor));
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(producer_version) {
  using namespace dlpv;
  auto rule = [&](const char* id, const char* title, std::vector<std::string> reqs, Severity sev,
                  void (*fn)(CaseContext&), std::vector<std::string> needs = {}) {
    CaseInfo c;
    c.id = id;
    c.title = title;
    c.requirements = std::move(reqs);
    c.severity = sev;
    c.role = Role::producer;
    c.params = {{"layout", "contiguous"}, {"device", "cpu:0"}};
    c.needs = std::move(needs);
    c.body = fn;
    cases::add_rule_cases(reg, c, {true});
  };
  rule("producer.version.major", "a versioned export declares major version 1", {"VER-01", "VER-02"},
       Severity::must, cases::version_major);
  rule("producer.strides.non_null", "strides are non-NULL for ndim > 0 when the tensor declares DLPack >= 1.2",
       {"LAYOUT-02"}, Severity::must, cases::strides_non_null);
  rule("producer.flags.defined_bits",
       "flags carry only bits defined for the declared version, IS_COPIED clear on zero-copy",
       {"FLAG-01", "FLAG-06", "FLAG-07"}, Severity::should, cases::flags_defined);
  rule("producer.flags.is_copied", "a copy=True export sets IS_COPIED", {"FLAG-05"}, Severity::must,
       cases::flags_is_copied, {"copy_keyword"});
  rule("producer.flags.read_only", "a read-only source is exported with READ_ONLY", {"FLAG-02"}, Severity::should,
       cases::flags_read_only);
  for (const char* mv : {"1.0", "1.99", "2.0"}) {
    CaseInfo c;
    c.id = std::string("producer.version.max_version_") + (mv[2] == '9' ? "1_99" : mv[0] == '2' ? "2_0" : "1_0");
    c.title = std::string("max_version ") + mv + " yields a versioned tensor of major 1";
    c.requirements = {"VER-07"};
    c.severity = Severity::should;
    c.role = Role::producer;
    c.params = {{"dtype", "float32"}, {"version", "versioned"}, {"max_version", mv}};
    c.needs = {"export_versioned"};
    c.body = cases::max_version;
    reg.add(std::move(c));
  }
}
