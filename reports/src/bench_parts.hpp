// SPDX-License-Identifier: Apache-2.0
// bench_parts.hpp: reading the "bench" section of a record for the writers (bench_of,
// bench_errors and bench_warnings are the verdict's: record_access.hpp) (terminal text,
// Markdown, HTML, JUnit all show the same table).
#pragma once

#include <string>
#include <vector>

#include "common.hpp"

namespace dlpv::reports::detail {

/// "21 batches of 1000 operations" / "... of operations sized to about 5.0 ms".
std::string batch_text(const json& settings);

/// One route, ready to print (figures as text with one decimal, "" when not measured).
struct BenchRow {
  std::string route, subjects, title, status, reason;
  std::string net_median, net_p10, net_p90, raw_median, raw_p10, raw_p90;
  std::string iterations, batches;
  std::string baseline, ratio;  ///< baseline net median and ratio, when compared
  bool regression = false;
};
std::vector<BenchRow> bench_rows(const json& run);

/// "harness overhead (empty route, subtracted): 1.5 ns/op [1.4 .. 1.6], N ops x B batches"
std::string bench_calibration_line(const json& run);

/// "route on subjects: message" for each regression warning.
std::vector<std::string> bench_warning_lines(const json& run);

/// The <section id="bench"> of the HTML report ("" without a bench section).
std::string html_bench(const json& run);

}  // namespace dlpv::reports::detail
