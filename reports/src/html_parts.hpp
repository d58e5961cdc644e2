// SPDX-License-Identifier: Apache-2.0
// html_parts.hpp: pieces of the HTML report, split by concept (matrices, assets) so each
// source file stays small. All functions return finished, escaped HTML fragments.
#pragma once

#include <map>
#include <string>

#include "common.hpp"

namespace dlpv::reports::detail {

/// "<span class="st st-fail">fail</span>": colour from CSS, meaning from the word itself.
std::string status_badge(const std::string& status);

/// Anchor id of result #index in run["results"] ("r-12"); every result row/article has one.
std::string result_anchor(std::size_t index);

/// Worst-status-wins tally of several results, for matrix cells.
struct Tally {
  std::map<std::string, int> counts;
  std::string worst;
  int total = 0;
  void add(const std::string& status);
  /// "3 cases: 2 pass, 1 fail" (canonical status order).
  std::string describe() const;
  /// A <td> with the worst status as text and the breakdown beside it.
  std::string cell() const;
};

std::string html_requirement_matrix(const json& run);
std::string html_support_matrix(const json& run);
/// Empty when the run has no pair results (the section is then omitted).
std::string html_pair_matrix(const json& run);

const char* html_style();
const char* html_script();

}  // namespace dlpv::reports::detail
