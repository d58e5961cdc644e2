// cases/exchange_api/header.cpp: exchange_api.header.*: the table, or one along its prev_api
// chain, declares major version 1 (XAPI-05).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/xapi.hpp"

namespace dlpv::cases {
namespace {

// XAPI-05: the chain offers a major-1 table (the head may be a newer major that chains back).
void header_version(CaseContext& ctx) {
  const DLPackExchangeAPI* head = head_or_skip(ctx);
  std::string chain;
  const DLPackExchangeAPI* api = major1_table(head, &chain);
  ctx.check(api != nullptr, "XAPI-05",
            "the table (or a table along its prev_api chain) declares major version 1, the only major defined",
            "a 1.x table", "chain " + chain);
}

DLPV_CASES {
  Declare("exchange_api.header.version", "the table, or one along its prev_api chain, declares major version 1")
      .must({"XAPI-05"}).role(Role::exchange_api)
      .needs({need::exchange_api})
      .proven_by({"xapi_major2"})
      .run(header_version);
}

}  // namespace
}  // namespace dlpv::cases
