// cases/exchange_api/prev_api.cpp: exchange_api.prev_api.*: the prev_api chain terminates,
// each table older than the one before (XAPI-06).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <set>

#include "support/xapi.hpp"

namespace dlpv::cases {
namespace {

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

DLPV_CASES {
  Declare("exchange_api.prev_api.chain", "the prev_api chain terminates, each table older than the one before")
      .must({"XAPI-06"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"xapi_cycle", "xapi_prev_not_older"})
      .run(prev_chain);
}

}  // namespace
}  // namespace dlpv::cases
