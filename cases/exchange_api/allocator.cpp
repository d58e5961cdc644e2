// cases/exchange_api/allocator.cpp: exchange_api.allocator.*: the allocator reads only what a
// prototype may carry and returns a compact owning tensor, per prototype (XAPI-16, LAYOUT-05,
// DTYPE-02); impossible allocations fail with exactly one SetError call (XAPI-16, XAPI-17).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <cstring>
#include <thread>

#include "support/xapi.hpp"

namespace dlpv::cases {
namespace {

struct SetErrorLog {
  int calls = 0;
  std::string kind, message;
};
void record_error(void* ctx, const char* kind, const char* message) {
  auto* log = static_cast<SetErrorLog*>(ctx);
  ++log->calls;
  log->kind = kind ? kind : "";
  log->message = message ? message : "";
}

// Only dtype, ndim, shape and device of the prototype may be read: the rest is garbage. The
// allocator is tried with the prototype named by the case's dtype/shape parameters; every
// tensor it hands back goes through the inspector (metadata; the contents are uninitialised).
void allocator_compact(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->managed_tensor_allocator) ctx.skip("managed_tensor_allocator is NULL (reported by XAPI-08)");
  const DLDataType dtype = ctx.dtype();
  const std::vector<int64_t> shape = shape_named(ctx.shape_name());
  const std::string what = fmt::format("{} {}", dtype_name(dtype), shape_text(shape));
  std::vector<int64_t> shape_storage = shape;
  DLTensor proto;
  std::memset(&proto, 0xCD, sizeof proto);
  proto.data = guard_address();
  proto.strides = static_cast<int64_t*>(guard_address());
  proto.device = DLDevice{kDLCPU, 0};
  proto.ndim = static_cast<int32_t>(shape.size());
  proto.dtype = dtype;
  proto.shape = shape.empty() ? static_cast<int64_t*>(guard_address()) : shape_storage.data();
  // The output pointer starts as poison, not NULL: a success that never writes it shows.
  auto* const poison = static_cast<DLManagedTensorVersioned*>(guard_address());
  DLManagedTensorVersioned* out = poison;
  SetErrorLog log;
  ctx.phase("exchange_api");
  int rc = api->managed_tensor_allocator(&proto, &out, &log, record_error);
  if (rc == 0 && out == poison) {
    ctx.check(false, "XAPI-16", "a successful allocator writes the new tensor to *out", "a tensor", "*out left unwritten");
    return;
  }
  if (rc != 0) {
    ctx.check(log.calls == 1 && !log.kind.empty(), "XAPI-16",
              "a failing allocator calls SetError exactly once, with a non-empty kind", "1 call",
              fmt::format("{} call(s), kind '{}'", log.calls, log.kind));
    ctx.skip(fmt::format("the allocator refused {} CPU prototype (return {}, SetError '{}: {}')", with_article(what), rc, log.kind,
                         log.message));
  }
  if (!ctx.check(out != nullptr, "XAPI-16", "the allocator makes " + with_article(what) + " CPU tensor", "0 and a tensor",
                 fmt::format("return {}, out NULL", rc)))
    return;
  ctx.check(log.calls == 0, "XAPI-16", "SetError is not called on success", "0 calls", std::to_string(log.calls));
  ctx.check(out->version.major == 1, "XAPI-16", "the new tensor carries version 1.x", "1.x",
            fmt::format("{}.{}", out->version.major, out->version.minor));
  ctx.phase("inspect");
  TensorExpectation want;
  want.dtype = dtype;
  want.shape = shape;
  InspectOptions opt;
  opt.versioned = true;
  opt.version = out->version;
  opt.compare_data = false;  // a new tensor's contents are unspecified
  std::vector<Finding> findings;
  inspect_tensor(out->dl_tensor, want, opt, findings);
  for (Finding& f : findings) f.message = "allocator: " + f.message;
  record(ctx, findings);
  const DLTensor& t = out->dl_tensor;
  // The prototype's byte_offset is garbage (0xCD bytes) that must not be read; the new tensor
  // owns its memory, so its byte_offset is the allocator's own (normally 0).
  ctx.check(t.byte_offset != proto.byte_offset, "XAPI-16",
            "the allocator ignores the prototype's byte_offset (garbage)", "a byte_offset of its own",
            fmt::format("{:#x}, the prototype's garbage", t.byte_offset));
  const size_t nd = shape.size();
  std::vector<int64_t> got_strides(nd, -1);
  const bool readable = nd == 0 || (t.strides && safe_read(t.strides, got_strides.data(), nd * sizeof(int64_t)));
  const std::vector<int64_t> compact = canonical_strides(DLPV_LAYOUT_CONTIGUOUS, shape);
  bool is_compact = readable;
  // A tensor with no element has no meaningful strides (any value addresses nothing).
  for (size_t i = 0; i < nd && is_compact && element_count(shape) > 0; ++i)
    is_compact = shape[i] <= 1 || got_strides[i] == compact[i];
  ctx.check(is_compact, "XAPI-16", "strides are non-NULL (ndim > 0) and compact row-major",
            shape_text(compact),
            t.strides || nd == 0 ? shape_text(got_strides) : "NULL");
  if (element_count(shape) > 0)
    ctx.check(t.data != proto.data && t.data != nullptr, "XAPI-16", "the tensor owns new memory", "new data pointer",
              fmt::format("{}", t.data));
  ctx.phase("deleter");
  if (out->deleter) out->deleter(out);
}

DLPV_CASES {
  // The allocator, per prototype: float32 2x3x4 (the id without a suffix), dtype classes, 0-d, empty.
  Declare("exchange_api.allocator.compact",
          "the allocator reads only dtype/ndim/shape/device of a {dtype} {shape} prototype and returns a compact owning tensor")
      .must({"XAPI-16", "LAYOUT-05", "DTYPE-02"}).role(Role::exchange_api)
      .kind(StructKind::versioned).dtype("float32").shape("ndim3")
      .combine("sample", {"", "uint8", "bool", "complex128", "float16", "int64", "float8_e4m3fn", "float4_e2m1fn",
                          "scalar", "empty"})
      .needs({need::exchange_api})
      .proven_by({"alloc_ignores_shape", "alloc_keeps_proto_fields", "alloc_out_unwritten"})
      .run(allocator_compact);
}

// Impossible sizes, chosen so that an element count computed without overflow checks wraps
// to a small number (2^62+1 times 4 is 4 modulo 2^64) or to zero (2^31 * 2^31 * 2^20).
void allocator_error(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->managed_tensor_allocator) ctx.skip("managed_tensor_allocator is NULL (reported by XAPI-08)");
  const std::vector<std::vector<int64_t>> shapes = {
      {(int64_t{1} << 62) + 1, 4}, {int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 20}};
  for (std::vector<int64_t> shape : shapes) {
    DLTensor proto{};
    proto.device = DLDevice{kDLCPU, 0};
    proto.ndim = static_cast<int32_t>(shape.size());
    proto.dtype = DLDataType{kDLFloat, 32, 1};
    proto.shape = shape.data();
    DLManagedTensorVersioned* out = nullptr;
    SetErrorLog log;
    const std::string what = "a float32 " + shape_text(shape) + " prototype";
    ctx.phase("exchange_api");
    int rc = api->managed_tensor_allocator(&proto, &out, &log, record_error);
    ctx.check(rc != 0, "XAPI-16", what + " (more than 2^64 elements) cannot be allocated: the call fails",
              "non-zero return",
              rc == 0 && out ? fmt::format("0, and a tensor of shape {}", shape_text(out->dl_tensor.shape, out->dl_tensor.ndim))
                             : std::to_string(rc));
    ctx.check(rc == 0 || (log.calls == 1 && !log.kind.empty()), "XAPI-16",
              "a failing allocator calls SetError exactly once, with a non-empty kind", "1 call",
              fmt::format("{} call(s), kind '{}'", log.calls, log.kind));
    ctx.phase("deleter");
    if (rc == 0 && out && out->deleter) out->deleter(out);
  }
}

DLPV_CASES {
  Declare("exchange_api.allocator.error", "impossible allocations (element counts that wrap around 2^64) fail with exactly one SetError call")
      .must({"XAPI-16", "XAPI-17"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"alloc_no_seterror", "alloc_no_overflow_check"})
      .run(allocator_error);
}

}  // namespace
}  // namespace dlpv::cases
