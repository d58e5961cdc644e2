// cases/consumer/flags.cpp: consumer.flags.*: what a consumer does with the flags of a
// versioned tensor: READ_ONLY imports read-only (FLAG-04), padded sub-byte data is decoded as
// padded or refused (FLAG-08).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

void read_only_flag(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = ctx.dtype();
  spec.shape = shape_named(ctx.shape_name());
  spec.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  // The data lies in read-only pages (MadeTensor): a consumer that writes there dies in this
  // phase, and the death is FLAG-04's.
  void* array = import_made(ctx, *made, true, &rc, "FLAG-04");
  if (!array) {
    const std::string error = ctx.subject().last_error();
    judge_refusal_ownership(ctx, *made, "a READ_ONLY tensor");
    // Refusing the flag is the warning; refusing an optional element type is the consumer's right.
    if (dtype_name(spec.dtype) != "float32")
      ctx.skip(fmt::format("the consumer refused a READ_ONLY {} tensor ({})", dtype_name(spec.dtype),
                           refusal_seen(ctx, rc, error)));
    ctx.check(false, "FLAG-04", "a READ_ONLY tensor is imported (not refused)", imported(ctx),
              refusal_seen(ctx, rc, error));
    return;
  }
  const int early = released_at_import(ctx, *made);
  read_back_matches(ctx, array, made->expected(), spec.dtype, "LAYOUT-01",
                    "the imported array of a READ_ONLY tensor holds its elements", early > 0);
  const int writable = ctx.subject().is_writable(array);
  if (early > 0)  // a copy: the consumer's own, writable or not
    ctx.check_as(Severity::may, true, "FLAG-04", fmt::format("the consumer copied the tensor (is_writable = {})", writable));
  else if (writable < 0)
    ctx.check_as(Severity::may, true, "FLAG-04", "the library has no read-only notion (is_writable = -1)");
  else
    ctx.check(writable == 0, "FLAG-04", "the imported array of a READ_ONLY tensor is read-only",
              "is_writable = 0", fmt::format("is_writable = {}", writable));
  release_expecting_one_delete(ctx, array, *made);
  // dlpack.h: the flag says "the tensor is read only"; the consumer never writes it.
  ctx.check(!made->read_only_data_written(), "FLAG-04", "the consumer never wrote into the READ_ONLY tensor's memory",
            "the bytes as made", "changed by the time the deleter ran");
}

DLPV_CASES {
  Declare("consumer.flags.read_only", "a READ_ONLY tensor imports as a read-only array")
      .should({"FLAG-04", "DEL-02"}).role(Role::consumer)
      .layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::read_array, need::release_array}).per_kind({StructKind::versioned}).per_sample()
      .proven_by({"ignore_read_only", "writes_read_only"})
      .run(read_only_flag);
}

// Padded sub-byte data read as packed is silent corruption (FLAG-08: a fail, not a warning).
void padded_subbyte(CaseContext& ctx) {
  MadeSpec spec;
  spec.dtype = DLDataType{DLPV_CODE_FLOAT4_E2M1FN, 4, 1};
  spec.shape = {3, 4};
  spec.padded_subbyte = true;
  spec.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  ctx.phase("setup");
  auto made = MadeTensor::make(spec, true);
  int rc = 0;
  void* array = import_made(ctx, *made, true, &rc);
  if (!array) {
    ctx.check(true, "FLAG-08", fmt::format("refused padded float4 data ({})", rc));
    judge_refusal_ownership(ctx, *made, "padded float4 data");
    return;
  }
  ctx.phase("read");
  std::vector<uint8_t> got(made->expected().size(), 0xEE);
  if (ctx.subject().read_array(array, got.data(), got.size()) != DLPV_OK)
    ctx.harness_error("read_array failed: " + ctx.subject().last_error());
  const std::string diff = describe_mismatch(spec.dtype, made->expected(), got);
  ctx.check_as(Severity::must, diff.empty(), "FLAG-08",
               "padded float4 data (flag 4) is decoded as padded, never as packed", "the pattern (packed read-back)",
               diff);
  release_expecting_one_delete(ctx, array, *made);
}

DLPV_CASES {
  // The record's dtype stays float32 (as it always was); the body makes padded float4 data.
  Declare("consumer.flags.padded_subbyte", "padded float4 data is decoded as padded or refused, never read as packed")
      .should({"FLAG-08", "DEL-08"}).role(Role::consumer)
      .dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .needs({need::read_array, need::release_array}).per_kind({StructKind::versioned})
      .proven_by({"ignore_padded_flag"})
      .run(padded_subbyte);
}

}  // namespace
}  // namespace dlpv::cases
