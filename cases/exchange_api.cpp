// cases/exchange_api.cpp: the C exchange-API table as seen from C (XAPI-04/05/06/08/15/16).
// SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

const DLPackExchangeAPI* table_or_skip(CaseContext& ctx) {
  ctx.phase("exchange_api");
  const DLPackExchangeAPI* api = ctx.subject().exchange_api();
  if (!api) ctx.skip("subject has no C exchange API (exchange_api() returned NULL)");
  return api;
}

std::string canonical(const std::string& path) {
  char buf[PATH_MAX];
  return realpath(path.c_str(), buf) ? std::string(buf) : path;
}

void table_static(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
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

void header_version(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  DLPackExchangeAPIHeader h{};
  if (!safe_read(api, &h, sizeof h)) {
    ctx.check(false, "XAPI-05", "the table is readable", "readable", "unreadable pointer");
    return;
  }
  ctx.check(h.version.major == 1, "XAPI-05", "the table's header declares major version 1",
            "1.x", fmt::format("{}.{}", h.version.major, h.version.minor));
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

void prev_chain(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  std::set<const void*> visited;
  const DLPackExchangeAPIHeader* node = &api->header;
  uint32_t last_major = UINT32_MAX;
  for (int depth = 0; node; ++depth) {
    DLPackExchangeAPIHeader h{};
    if (!safe_read(node, &h, sizeof h)) {
      ctx.check(false, "XAPI-06", "every prev_api entry points to a readable table", "readable",
                fmt::format("unreadable table at depth {}", depth));
      return;
    }
    if (!visited.insert(node).second) {
      ctx.check(false, "XAPI-06", "the prev_api chain terminates", "a NULL-terminated chain",
                fmt::format("cycle back to a table already visited, at depth {}", depth));
      return;
    }
    if (depth > 0 && !(h.version.major < last_major)) {
      ctx.check(false, "XAPI-06", "majors strictly decrease along prev_api", fmt::format("< {}", last_major),
                fmt::format("{} at depth {}", h.version.major, depth));
      return;
    }
    last_major = h.version.major;
    node = h.prev_api;
  }
  ctx.check(true, "XAPI-06", fmt::format("prev_api chain of {} table(s) terminates with decreasing majors",
                                         visited.size()));
}

void current_stream_cpu(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->current_work_stream) ctx.skip("current_work_stream is NULL (reported by XAPI-08)");
  void* stream = reinterpret_cast<void*>(0x1);
  int rc = api->current_work_stream(kDLCPU, 0, &stream);
  ctx.check(rc == 0, "XAPI-15", "current_work_stream(kDLCPU, 0) succeeds", "0", std::to_string(rc));
  if (rc == 0)
    ctx.check(stream == nullptr, "XAPI-15", "a CPU has no stream: the out value is NULL", "NULL",
              fmt::format("{}", stream));
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

// Only dtype, ndim, shape and device of the prototype may be read: the rest is garbage.
void allocator_compact(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->managed_tensor_allocator) ctx.skip("managed_tensor_allocator is NULL (reported by XAPI-08)");
  std::vector<int64_t> shape{2, 3, 5};
  DLTensor proto;
  std::memset(&proto, 0xCD, sizeof proto);
  proto.data = guard_address();
  proto.strides = static_cast<int64_t*>(guard_address());
  proto.device = DLDevice{kDLCPU, 0};
  proto.ndim = 3;
  proto.dtype = DLDataType{kDLFloat, 32, 1};
  proto.shape = shape.data();
  DLManagedTensorVersioned* out = nullptr;
  SetErrorLog log;
  ctx.phase("exchange_api");
  int rc = api->managed_tensor_allocator(&proto, &out, &log, record_error);
  if (!ctx.check(rc == 0 && out, "XAPI-16", "the allocator makes a float32 2x3x5 CPU tensor", "0 and a tensor",
                 fmt::format("return {}, out {}, SetError '{}: {}'", rc, static_cast<void*>(out), log.kind, log.message)))
    return;
  ctx.check(log.calls == 0, "XAPI-16", "SetError is not called on success", "0 calls", std::to_string(log.calls));
  const DLTensor& t = out->dl_tensor;
  ctx.check(out->version.major == 1, "XAPI-16", "the new tensor carries version 1.x", "1.x",
            fmt::format("{}.{}", out->version.major, out->version.minor));
  std::vector<int64_t> got_shape(3, -1), got_strides(3, -1);
  const bool shape_ok = t.ndim == 3 && safe_read(t.shape, got_shape.data(), 24) && got_shape == shape;
  ctx.check(shape_ok && dtype_equal(t.dtype, proto.dtype) && t.device.device_type == kDLCPU, "XAPI-16",
            "dtype, shape and device follow the prototype", "float32 (2, 3, 5) cpu:0",
            fmt::format("{} {} {}", dtype_name(t.dtype), shape_text(t.shape, t.ndim), device_name(t.device)));
  const bool compact = t.strides && safe_read(t.strides, got_strides.data(), 24) &&
                       got_strides == std::vector<int64_t>{15, 5, 1};
  ctx.check(compact, "XAPI-16", "strides are non-NULL and compact row-major", "(15, 5, 1)",
            t.strides ? shape_text(got_strides.data(), 3) : "NULL");
  ctx.check(t.data != proto.data && t.data != nullptr, "XAPI-16", "the tensor owns new memory", "new data pointer",
            fmt::format("{}", t.data));
  ctx.phase("deleter");
  if (out->deleter) out->deleter(out);
}

void allocator_error(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  if (!api->managed_tensor_allocator) ctx.skip("managed_tensor_allocator is NULL (reported by XAPI-08)");
  std::vector<int64_t> shape{int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 20};  // 2^82 elements
  DLTensor proto{};
  proto.device = DLDevice{kDLCPU, 0};
  proto.ndim = 3;
  proto.dtype = DLDataType{kDLFloat, 32, 1};
  proto.shape = shape.data();
  DLManagedTensorVersioned* out = nullptr;
  SetErrorLog log;
  ctx.phase("exchange_api");
  int rc = api->managed_tensor_allocator(&proto, &out, &log, record_error);
  ctx.check(rc != 0, "XAPI-16", "an impossible allocation (2^82 elements) fails", "non-zero return",
            std::to_string(rc));
  ctx.check(log.calls == 1 && !log.kind.empty(), "XAPI-16",
            "a failing allocator calls SetError exactly once, with a non-empty kind", "1 call",
            fmt::format("{} call(s), kind '{}'", log.calls, log.kind));
  if (rc == 0 && out && out->deleter) out->deleter(out);
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
  add("exchange_api.header.version", "the table header declares major version 1", {"XAPI-05"},
      cases::header_version);
  add("exchange_api.table.required_pointers", "the four required function pointers are non-NULL",
      {"XAPI-08"}, cases::required_pointers);
  add("exchange_api.prev_api.chain", "the prev_api chain terminates with decreasing majors",
      {"XAPI-06"}, cases::prev_chain);
  add("exchange_api.current_work_stream.cpu", "current_work_stream(kDLCPU) returns 0 and a NULL stream",
      {"XAPI-15"}, cases::current_stream_cpu);
  add("exchange_api.allocator.compact",
      "the allocator reads only dtype/ndim/shape/device and returns a compact owning tensor",
      {"XAPI-16"}, cases::allocator_compact);
  add("exchange_api.allocator.error", "an impossible allocation fails with exactly one SetError call",
      {"XAPI-16", "XAPI-17"}, cases::allocator_error);
}
