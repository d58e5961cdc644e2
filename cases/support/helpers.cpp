// cases/support/helpers.cpp
// SPDX-License-Identifier: Apache-2.0
#include "helpers.hpp"

#include <fmt/format.h>

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

std::string kind_name(bool versioned) { return versioned ? "versioned" : "legacy"; }

void inspect_export(CaseContext& ctx, const Exported& e, const Request& r, bool versioned) {
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = r.req.dtype;
  want.shape = r.shape;
  want.layout = r.req.layout;
  want.device = r.req.device;
  InspectOptions opt;
  opt.versioned = versioned;
  opt.version = versioned ? e.v->version : ctx.subject().info().dlpack_version;
  std::vector<Finding> findings;
  inspect_tensor(e.tensor(), want, opt, findings);
  record(ctx, findings);
}

Exported export_or_skip(CaseContext& ctx, bool versioned, const Request& r, const char* requirement) {
  Exported e;
  ctx.phase("export");
  int rc = versioned ? ctx.subject().export_versioned(r.req, &e.v)
                     : ctx.subject().export_legacy(r.req, &e.l);
  const std::string what = fmt::format("{} {} {}", dtype_name(r.req.dtype),
                                       shape_text(r.shape.data(), r.req.ndim), layout_name(r.req.layout));
  if (rc == DLPV_UNSUPPORTED)
    ctx.skip(fmt::format("subject refused {} export of {} cleanly (DLPV_UNSUPPORTED): {}",
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
                               int* failures) {
  constexpr int kWarmup = 200;
  size_t before = 0;
  *failures = 0;
  for (int i = 0; i < kWarmup + cycles; ++i) {
    if (i == kWarmup) before = heap_in_use();
    DLManagedTensorVersioned* v = nullptr;
    DLManagedTensor* l = nullptr;
    const int rc = versioned ? ctx.subject().export_versioned(r.req, &v) : ctx.subject().export_legacy(r.req, &l);
    if (rc != DLPV_OK || (!v && !l)) {
      ++*failures;
      continue;
    }
    call_deleter(v, true);
    call_deleter(l, false);
  }
  return static_cast<long long>(heap_in_use()) - static_cast<long long>(before);
}

void* import_made(CaseContext& ctx, MadeTensor& t, bool versioned, int* rc) {
  void* array = nullptr;
  ctx.phase("import");
  *rc = versioned ? ctx.subject().import_versioned(t.versioned(), &array)
                  : ctx.subject().import_legacy(t.legacy(), &array);
  return *rc == DLPV_OK ? array : nullptr;
}

bool read_back_matches(CaseContext& ctx, void* array, const std::vector<uint8_t>& expected,
                       DLDataType dtype, const char* requirement, const std::string& what) {
  ctx.phase("read");
  std::vector<uint8_t> got(expected.size(), 0xEE);
  int rc = ctx.subject().read_array(array, got.data(), got.size());
  if (rc != DLPV_OK)
    ctx.harness_error(fmt::format("read_array failed (return {}): {}", rc, ctx.subject().last_error()));
  std::string diff = describe_mismatch(dtype, expected, got);
  return ctx.check(diff.empty(), requirement, what, "the reference pattern", diff);
}

}  // namespace dlpv::cases
