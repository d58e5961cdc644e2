// cases/support/xapi.cpp: finding the exchange-API table a case may read (xapi.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "xapi.hpp"

#include <fmt/format.h>

#include <set>

namespace dlpv::cases {

const DLPackExchangeAPI* head_or_skip(CaseContext& ctx) {
  ctx.phase("exchange_api");
  const DLPackExchangeAPI* api = ctx.subject().exchange_api();
  if (!api) ctx.skip("subject has no C exchange API (exchange_api() returned NULL)");
  return api;
}

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

}  // namespace dlpv::cases
