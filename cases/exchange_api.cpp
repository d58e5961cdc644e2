// cases/exchange_api.cpp: the C exchange-API table as seen from C (XAPI-04/05/06/08/15/16).
// Every case but the chain and static-table checks walks prev_api to the major-1 table first and
// reads nothing else: dlpack.h (DLPackExchangeAPIHeader.version) "the consumer must check major
// version compatibility before using this struct".
// SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <tuple>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLPackExchangeAPI* head_or_skip(CaseContext& ctx) {
  ctx.phase("exchange_api");
  const DLPackExchangeAPI* api = ctx.subject().exchange_api();
  if (!api) ctx.skip("subject has no C exchange API (exchange_api() returned NULL)");
  return api;
}

// The first table of major 1 along prev_api (the head included), read defensively; NULL when
// the chain offers none (or is unreadable or cyclic: exchange_api.prev_api.chain reports that).
const DLPackExchangeAPI* major1_table(const DLPackExchangeAPI* head, std::string* seen) {
  std::set<const void*> visited;
  for (const DLPackExchangeAPIHeader* node = &head->header; node && visited.insert(node).second;) {
    DLPackExchangeAPIHeader h{};
    if (!safe_read(node, &h, sizeof h)) {
      *seen += " -> unreadable";
      return nullptr;
    }
    *seen += fmt::format("{}{}.{}", seen->empty() ? "" : " -> ", h.version.major, h.version.minor);
    if (h.version.major == 1) {
      DLPackExchangeAPI whole{};
      if (!safe_read(node, &whole, sizeof whole)) return nullptr;
      return reinterpret_cast<const DLPackExchangeAPI*>(node);
    }
    node = h.prev_api;
  }
  return nullptr;
}

const DLPackExchangeAPI* table_or_skip(CaseContext& ctx) {
  const DLPackExchangeAPI* head = head_or_skip(ctx);
  std::string chain;
  const DLPackExchangeAPI* api = major1_table(head, &chain);
  if (!api)
    ctx.skip("the exchange-API chain (" + chain + ") offers no major-1 table the validator can read "
             "(exchange_api.header.version reports it)");
  return api;
}

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

void table_static(CaseContext& ctx) {
  const DLPackExchangeAPI* api = head_or_skip(ctx);
  bool same = true;
  for (int i = 0; i < 3; ++i) same = same && ctx.subject().exchange_api() == api;
  const DLPackExchangeAPI* seen[4] = {};
  std::thread threads[4];
  for (int i = 0; i < 4; ++i) threads[i] = std::thread([&, i] { seen[i] = ctx.subject().exchange_api(); });
  for (auto& t : threads) t.join();
  for (const auto* p : seen) same = same && p == api;
  ctx.check(same, "XAPI-04", "every lookup, from any thread, returns the same table", "one pointer",
            "different pointers across calls/threads");
  Dl_info where{};
  const bool found = dladdr(api, &where) != 0 && where.dli_fname;
  const std::string image = canonical(ctx.subject().image_path());
  const std::string owner = found ? canonical(where.dli_fname) : std::string("no loaded image (heap or stack)");
  ctx.check(found && owner == image, "XAPI-04",
            "the table is a static object inside the library's image, not heap memory",
            image, owner + fmt::format(" at {}", static_cast<const void*>(api)));
}

// XAPI-05: the chain offers a major-1 table (the head may be a newer major that chains back).
void header_version(CaseContext& ctx) {
  const DLPackExchangeAPI* head = head_or_skip(ctx);
  std::string chain;
  const DLPackExchangeAPI* api = major1_table(head, &chain);
  ctx.check(api != nullptr, "XAPI-05",
            "the table (or a table along its prev_api chain) declares major version 1, the only major defined",
            "a 1.x table", "chain " + chain);
}

void required_pointers(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  const std::pair<const char*, bool> fields[] = {
      {"managed_tensor_allocator", api->managed_tensor_allocator != nullptr},
      {"managed_tensor_from_py_object_no_sync", api->managed_tensor_from_py_object_no_sync != nullptr},
      {"managed_tensor_to_py_object_no_sync", api->managed_tensor_to_py_object_no_sync != nullptr},
      {"current_work_stream", api->current_work_stream != nullptr}};
  for (const auto& [name, present] : fields)
    ctx.check(present, "XAPI-08", std::string(name) + " is non-NULL (required by the header)",
              "non-NULL", "NULL");
  ctx.note(api->dltensor_from_py_object_no_sync ? "dltensor_from_py_object_no_sync provided"
                                                : "dltensor_from_py_object_no_sync is NULL (optional)");
}

// XAPI-06. dlpack.h (DLPackExchangeAPIHeader.prev_api): "Optional pointer to an older
// DLPackExchangeAPI in the chain. It must be NULL if the framework does not support older
// versions." Older means a smaller (major, minor): an older minor of the same major is lawful.
void prev_chain(CaseContext& ctx) {
  const DLPackExchangeAPI* api = head_or_skip(ctx);
  std::set<const void*> visited;
  const DLPackExchangeAPIHeader* node = &api->header;
  DLPackVersion last{UINT32_MAX, UINT32_MAX};
  std::string chain;
  for (int depth = 0; node; ++depth) {
    DLPackExchangeAPIHeader h{};
    if (!safe_read(node, &h, sizeof h)) {
      ctx.check(false, "XAPI-06", "every prev_api entry points to a readable table", "readable",
                fmt::format("unreadable table at depth {} (after {})", depth, chain));
      return;
    }
    if (!visited.insert(node).second) {
      ctx.check(false, "XAPI-06", "the prev_api chain terminates", "a NULL-terminated chain",
                fmt::format("cycle back to a table already visited, at depth {} ({})", depth, chain));
      return;
    }
    chain += fmt::format("{}{}.{}", chain.empty() ? "" : " -> ", h.version.major, h.version.minor);
    const bool older = h.version.major < last.major || (h.version.major == last.major && h.version.minor < last.minor);
    if (depth > 0 && !older) {
      ctx.check(false, "XAPI-06", "each prev_api table is older (a smaller major.minor) than the one before",
                fmt::format("< {}.{}", last.major, last.minor), fmt::format("{} (depth {})", chain, depth));
      return;
    }
    last = h.version;
    node = h.prev_api;
  }
  ctx.check(true, "XAPI-06", fmt::format("prev_api chain {} terminates, each table older than the one before", chain));
}

void current_stream_cpu(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->current_work_stream) ctx.skip("current_work_stream is NULL (reported by XAPI-08)");
  void* stream = reinterpret_cast<void*>(0x1);
  int rc = api->current_work_stream(kDLCPU, 0, &stream);
  ctx.check(rc == 0, "XAPI-15", "current_work_stream(kDLCPU, 0) succeeds", "0", std::to_string(rc));
  // dlpack.h (DLPackCurrentWorkStream): "When device_type is kDLCPU, the consumer do not have to
  // query the stream and the producer can simply return NULL when queried." Can, not must: any
  // value is lawful.
  if (rc == 0)
    ctx.note(stream ? fmt::format("current_work_stream(kDLCPU) gives {} (lawful: the CPU value is the producer's to choose)", stream)
                    : "current_work_stream(kDLCPU) gives NULL");
}

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
  const DLDataType dtype = *dtype_from_name(ctx.param("dtype"));
  const std::vector<int64_t> shape = shape_named(ctx.param("shape"));
  const std::string what = fmt::format("{} {}", dtype_name(dtype), shape_text(shape.data(), static_cast<int32_t>(shape.size())));
  std::vector<int64_t> shape_storage = shape;
  DLTensor proto;
  std::memset(&proto, 0xCD, sizeof proto);
  proto.data = guard_address();
  proto.strides = static_cast<int64_t*>(guard_address());
  proto.device = DLDevice{kDLCPU, 0};
  proto.ndim = static_cast<int32_t>(shape.size());
  proto.dtype = dtype;
  proto.shape = shape.empty() ? static_cast<int64_t*>(guard_address()) : shape_storage.data();
  DLManagedTensorVersioned* out = nullptr;
  SetErrorLog log;
  ctx.phase("exchange_api");
  int rc = api->managed_tensor_allocator(&proto, &out, &log, record_error);
  if (rc != 0) {
    ctx.check(log.calls == 1 && !log.kind.empty(), "XAPI-16",
              "a failing allocator calls SetError exactly once, with a non-empty kind", "1 call",
              fmt::format("{} call(s), kind '{}'", log.calls, log.kind));
    ctx.skip(fmt::format("the allocator refused a {} CPU prototype (return {}, SetError '{}: {}')", what, rc, log.kind,
                         log.message));
  }
  if (!ctx.check(out != nullptr, "XAPI-16", "the allocator makes a " + what + " CPU tensor", "0 and a tensor",
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
  const size_t nd = shape.size();
  std::vector<int64_t> got_strides(nd, -1);
  const bool readable = nd == 0 || (t.strides && safe_read(t.strides, got_strides.data(), nd * sizeof(int64_t)));
  const std::vector<int64_t> compact = canonical_strides(DLPV_LAYOUT_CONTIGUOUS, shape);
  bool is_compact = readable;
  // A tensor with no element has no meaningful strides (any value addresses nothing).
  for (size_t i = 0; i < nd && is_compact && element_count(shape) > 0; ++i)
    is_compact = shape[i] <= 1 || got_strides[i] == compact[i];
  ctx.check(is_compact, "XAPI-16", "strides are non-NULL (ndim > 0) and compact row-major",
            shape_text(compact.data(), static_cast<int32_t>(nd)),
            t.strides || nd == 0 ? shape_text(got_strides.data(), static_cast<int32_t>(nd)) : "NULL");
  if (element_count(shape) > 0)
    ctx.check(t.data != proto.data && t.data != nullptr, "XAPI-16", "the tensor owns new memory", "new data pointer",
              fmt::format("{}", t.data));
  ctx.phase("deleter");
  if (out->deleter) out->deleter(out);
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
    const std::string what = "a float32 " + shape_text(shape.data(), proto.ndim) + " prototype";
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

}  // namespace
}  // namespace dlpv::cases

DLPV_CASE_UNIT(exchange_api) {
  using namespace dlpv;
  auto add = [&](const char* id, const char* title, std::vector<std::string> reqs, void (*fn)(CaseContext&)) {
    CaseInfo c;
    c.id = id;
    c.title = title;
    c.requirements = std::move(reqs);
    c.role = Role::exchange_api;
    c.needs = {"exchange_api"};
    c.body = fn;
    reg.add(std::move(c));
  };
  add("exchange_api.table.static", "the exchange-API table is one static object inside the library",
      {"XAPI-04"}, cases::table_static);
  add("exchange_api.header.version", "the table, or one along its prev_api chain, declares major version 1", {"XAPI-05"},
      cases::header_version);
  add("exchange_api.table.required_pointers", "the four required function pointers are non-NULL",
      {"XAPI-08"}, cases::required_pointers);
  add("exchange_api.prev_api.chain", "the prev_api chain terminates, each table older than the one before",
      {"XAPI-06"}, cases::prev_chain);
  add("exchange_api.current_work_stream.cpu", "current_work_stream(kDLCPU) returns 0 (any stream value is lawful)",
      {"XAPI-15"}, cases::current_stream_cpu);
  // The allocator, per prototype: float32 2x3x5 (the id without a suffix), dtype classes, 0-d, empty.
  const std::tuple<const char*, const char*, const char*> prototypes[] = {
      {"", "float32", "ndim3"},      {".uint8", "uint8", "3x4"},      {".bool", "bool", "3x4"},
      {".complex128", "complex128", "3x4"}, {".float16", "float16", "3x4"}, {".int64", "int64", "3x4"},
      {".float8_e4m3fn", "float8_e4m3fn", "3x4"}, {".float4_e2m1fn", "float4_e2m1fn", "3x4"},
      {".scalar", "float32", "scalar"}, {".empty", "float32", "empty"}};
  for (const auto& [suffix, dtype, shape] : prototypes) {
    CaseInfo c;
    c.id = std::string("exchange_api.allocator.compact") + suffix;
    c.title = std::string("the allocator reads only dtype/ndim/shape/device of a ") + dtype + " " + shape +
              " prototype and returns a compact owning tensor";
    c.requirements = {"XAPI-16", "LAYOUT-05", "DTYPE-02"};
    c.role = Role::exchange_api;
    c.params = {{"dtype", dtype}, {"shape", shape}, {"version", "versioned"}};
    c.needs = {"exchange_api"};
    c.body = cases::allocator_compact;
    reg.add(std::move(c));
  }
  add("exchange_api.allocator.error",
      "impossible allocations (element counts that wrap around 2^64) fail with exactly one SetError call",
      {"XAPI-16", "XAPI-17"}, cases::allocator_error);
}
