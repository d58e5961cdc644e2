// SPDX-License-Identifier: Apache-2.0
// html_parts.hpp: pieces of the HTML report, split by concept (matrices, assets) so each
// source file stays small. All functions return finished, escaped HTML fragments.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common.hpp"

namespace dlpv::reports::detail {

/// "<span class="st st-fail">fail</span>": colour from CSS, meaning from the word itself.
std::string status_badge(const std::string& status);

/// Anchor id of result #index in run["results"] ("r-12"); every result row/article has one.
std::string result_anchor(std::size_t index);

/// Worst-status-wins tally of several results, for matrix cells.
/// "3 cases: 2 pass, 1 fail": a count of `noun`s and its breakdown in canonical status order.
std::string count_breakdown(std::size_t n, const char* noun, const std::map<std::string, int>& counts);

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

/// Results shown once for several subjects: identical id, status, reason, expected,
/// observed and output. groups are sets of result indexes in first-seen order.
struct Shown {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<std::size_t> group_of;  ///< result index -> its group
  /// Element id where result #index is shown ("r-<first index of its group>").
  std::string anchor(std::size_t index) const;
};
Shown collapse_results(const json& run);


/// Unexpected results sharing a status, message and expected value (indexes into Shown::groups).
struct AttentionCause {
  std::string status, message, expected;
  std::vector<std::size_t> groups;
  std::size_t results = 0;
  bool single = false;  ///< holds a single-subject (non-pair) result
};
/// Unexpected results by failed requirement; anchor is the element id of its section.
struct AttentionGroup {
  std::string requirement, anchor;
  std::vector<AttentionCause> causes;
  std::map<std::string, int> counts;
  std::size_t results = 0;
  bool single = false;
  /// "28 results: 28 fail"
  std::string describe() const;
};
std::vector<AttentionGroup> attention_groups(const json& run, const Shown& shown);

/// "Needs attention" (id "unexpected"); supervision_html (incidents, cases not run) goes first.
std::string html_attention(const json& run, const Shown& shown, const std::vector<AttentionGroup>& groups,
                           const std::string& supervision_html);
/// Every result, one line each, folded by area and status (id "results").
std::string html_results(const json& run, const Shown& shown);

std::string html_requirement_matrix(const json& run, const Shown& shown);
std::string html_support_matrix(const json& run);
/// Empty when the run has no pair results (the section is then omitted).
std::string html_pair_matrix(const json& run);

const char* html_style();
const char* html_script();

}  // namespace dlpv::reports::detail
