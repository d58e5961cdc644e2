// cases/support/xapi.hpp: finding the exchange-API table a case may read (exchange_api.*).
// dlpack.h (DLPackExchangeAPIHeader.version): "the consumer must check major version
// compatibility before using this struct", so every case but the chain and static-table checks
// walks prev_api to the major-1 table first and reads nothing else.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "helpers.hpp"

namespace dlpv::cases {

/// The subject's table (the head of the chain); a skip when it has none.
const DLPackExchangeAPI* head_or_skip(CaseContext& ctx);

/// The first table of major 1 along prev_api (the head included), read defensively; NULL when
/// the chain offers none (or is unreadable or cyclic: exchange_api.prev_api.chain reports that).
/// `seen` gets the versions walked ("2.0 -> 1.3").
const DLPackExchangeAPI* major1_table(const DLPackExchangeAPI* head, std::string* seen);

/// The major-1 table; a skip naming the chain when there is none.
const DLPackExchangeAPI* table_or_skip(CaseContext& ctx);

}  // namespace dlpv::cases
