// cases/consumer_refusals.cpp: tensors a consumer must not misinterpret: unknown or
// ill-formed dtypes, opaque handles, foreign devices, more dimensions than it supports
// (DTYPE-06/08/09, DEV-04, LAYOUT-14, with DEL-08 on every refusal).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/cuda.hpp>
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

struct Bad {
  const char* id;
  const char* req;
  Severity severity;
  DLDataType dtype;
  DLDevice device;
  const char* what;
};

const Bad kBad[] = {
    {"dtype.float4_bits8", "DTYPE-06", Severity::must, {17, 8, 1}, {kDLCPU, 0}, "float4_e2m1fn declared with bits 8"},
    {"dtype.float6_bits8", "DTYPE-06", Severity::must, {15, 8, 1}, {kDLCPU, 0}, "float6_e2m3fn declared with bits 8"},
    {"dtype.unknown_code", "DTYPE-08", Severity::should, {200, 32, 1}, {kDLCPU, 0}, "dtype code 200"},
    {"dtype.float24", "DTYPE-08", Severity::should, {2, 24, 1}, {kDLCPU, 0}, "a 24-bit float"},
    {"dtype.float32x4", "DTYPE-08", Severity::should, {2, 32, 4}, {kDLCPU, 0}, "float32 with 4 lanes"},
    {"dtype.opaque_handle", "DTYPE-09", Severity::should, {3, 64, 1}, {kDLCPU, 0}, "kDLOpaqueHandle elements"},
    {"device.cuda", "DEV-04", Severity::should, {2, 32, 1}, {kDLCUDA, 0}, "a tensor on kDLCUDA (a CPU-only consumer cannot read it)"},
    {"device.vulkan", "DEV-04", Severity::should, {2, 32, 1}, {kDLVulkan, 0}, "a tensor on kDLVulkan"},
};

void refuse(CaseContext& ctx) {
  const std::string& which = ctx.param("tensor");
  for (const Bad& b : kBad) {
    if (which != b.id) continue;
    if (b.device.device_type == kDLCUDA && cuda::available())
      ctx.skip("a CUDA device is present here, so a consumer may use kDLCUDA tensors "
               "(device.consumer.cuda* test that); this case is for machines without one");
    MadeSpec spec;
    spec.dtype = b.dtype;
    spec.device = b.device;
    // A consumer that knows these tensors may hold them; the pattern bytes are well defined.
    consumer_must_refuse(ctx, spec, ctx.param("version") == "versioned", b.req, b.what);
    return;
  }
  ctx.harness_error("unknown tensor kind " + which);
}

// 65 dimensions: refusing (NumPy's limit is 64) or reading it right are both fine.
void ndim65(CaseContext& ctx) {
  MadeSpec spec;
  spec.shape.assign(65, 1);
  spec.shape[64] = 2;
  spec.version = DLPackVersion{1, 3};
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (!array) {
    judge_refusal_ownership(ctx, *made, "65 dimensions");
    ctx.check(true, "LAYOUT-14", fmt::format("refused a 65-dimensional tensor cleanly ({})", rc));
    return;
  }
  read_back_matches(ctx, array, made->expected(), spec.dtype, "LAYOUT-14",
                    "a consumer that accepts 65 dimensions reads them right");
  release_expecting_one_delete(ctx, array, *made);
}

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(consumer_refusals) {
  using namespace dlpv;
  for (const auto& b : cases::kBad) {
    for (bool versioned : {true, false}) {
      CaseInfo c;
      const std::string kind = cases::kind_name(versioned);
      c.id = fmt::format("consumer.refuse.{}.{}", b.id, kind);
      c.title = fmt::format("{} import refuses {}", kind, b.what);
      c.requirements = {b.req, "DEL-08"};
      c.severity = b.severity;
      c.role = Role::consumer;
      c.params = {{"tensor", b.id}, {"version", kind}, {"dtype", dtype_name(b.dtype)},
                  {"device", device_name(b.device)}};
      c.needs = {versioned ? "import_versioned" : "import_legacy", "release_array"};
      c.body = cases::refuse;
      reg.add(std::move(c));
    }
  }
  CaseInfo c;
  c.id = "consumer.ndim65.versioned";
  c.title = "a 65-dimensional tensor is refused cleanly or read right, never overflowing";
  c.requirements = {"LAYOUT-14", "DEL-08"};
  c.severity = Severity::should;
  c.role = Role::consumer;
  c.params = {{"version", "versioned"}, {"dtype", "float32"}};
  c.needs = {"import_versioned", "read_array", "release_array"};
  c.body = cases::ndim65;
  reg.add(std::move(c));
}
