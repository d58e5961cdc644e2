// cases/exchange_api/table.cpp: exchange_api.table.*: the C exchange-API table is one static
// object inside the library (XAPI-04) with its four required function pointers (XAPI-08).
// SPDX-License-Identifier: Apache-2.0
#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>

#include <cstdlib>
#include <set>
#include <thread>
#include <string>

#include "support/xapi.hpp"

namespace dlpv::cases {
namespace {

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

DLPV_CASES {
  Declare("exchange_api.table.static", "the exchange-API table is one static object inside the library")
      .must({"XAPI-04"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"heap_xapi_table"})
      .run(table_static);
}

// Every major-1 table of the chain, not only the first: a consumer that stops at an older
// table it prefers calls that table's functions (tables of another major have an unknown
// layout and are not read).
void required_pointers(CaseContext& ctx) {
  const DLPackExchangeAPI* api = table_or_skip(ctx);
  std::set<const void*> visited;
  int depth = 0;
  for (const DLPackExchangeAPIHeader* node = &api->header; node && visited.insert(node).second && depth < 16;
       ++depth) {
    DLPackExchangeAPI t{};
    if (!safe_read(node, &t, sizeof t)) break;  // exchange_api.prev_api.chain reports it
    node = t.header.prev_api;
    if (t.header.version.major != 1) continue;
    const std::string where =
        depth == 0 ? std::string() : fmt::format(" in the prev_api table {}.{} (depth {})", t.header.version.major,
                                                 t.header.version.minor, depth);
    const std::pair<const char*, bool> fields[] = {
        {"managed_tensor_allocator", t.managed_tensor_allocator != nullptr},
        {"managed_tensor_from_py_object_no_sync", t.managed_tensor_from_py_object_no_sync != nullptr},
        {"managed_tensor_to_py_object_no_sync", t.managed_tensor_to_py_object_no_sync != nullptr},
        {"current_work_stream", t.current_work_stream != nullptr}};
    for (const auto& [name, present] : fields)
      ctx.check(present, "XAPI-08", std::string(name) + " is non-NULL (required by the header)" + where,
                "non-NULL", "NULL");
  }
  ctx.note(api->dltensor_from_py_object_no_sync ? "dltensor_from_py_object_no_sync provided"
                                                : "dltensor_from_py_object_no_sync is NULL (optional)");
}

DLPV_CASES {
  Declare("exchange_api.table.required_pointers", "the four required function pointers are non-NULL")
      .must({"XAPI-08"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"xapi_null_allocator", "xapi_prev_null_pointers"})
      .run(required_pointers);
}

}  // namespace
}  // namespace dlpv::cases
