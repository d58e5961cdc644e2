// SPDX-License-Identifier: Apache-2.0
// summary.cpp: the verdict. Recomputed from the results every time, never trusted from a
// saved record, so re-judging a record (new baseline, --strict) cannot leave stale counts.
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "dlpack_validate/record_access.hpp"
#include "dlpack_validate/verdict.hpp"
#include "io.hpp"

namespace dlpv::verdict {

using access::json;
namespace a = access;

void finalize_summary(json& run) {
  const bool strict = a::is_strict(run);
  json counts = json::object();
  for (auto s : a::k_statuses) counts[std::string(s)] = 0;

  std::size_t total = 0, unexpected = 0;
  if (run.contains("results") && run["results"].is_array()) {
    for (const auto& r : run["results"]) {
      std::string st = a::status_of(r);
      counts[st] = counts[st].get<long long>() + 1;
      ++total;
      if (a::is_unexpected(st, strict)) ++unexpected;
      // A baseline entry marked "strict": its case passing again fails the run (as --strict
      // makes every xpass do).
      else if (st == "xpass" && r.contains("baseline") && r["baseline"].is_object() &&
               r["baseline"].value("strict", false) == true)
        ++unexpected;
    }
  }
  if (strict && run.contains("baseline_report") && run["baseline_report"].is_object()) {
    const json& report = run["baseline_report"];
    auto stale = report.find("stale");
    if (stale != report.end() && stale->is_array()) unexpected += stale->size();
  }
  // A bench record: a route that could not be measured is unexpected; a regression against
  // --bench-baseline is a warning (unexpected only under strict).
  unexpected += a::bench_errors(run);
  // A worker that died or broke the protocol with no case in flight is the library's doing
  // (nothing of ours runs there): unexpected, though charged to no case.
  const std::size_t incidents = a::array_at(run, "incidents").size();
  unexpected += incidents;
  const std::size_t not_run = a::not_run_count(run);
  if (strict) unexpected += a::bench_warnings(run);
  json summary = json::object();
  summary["total"] = total;
  summary["counts"] = std::move(counts);
  summary["incidents"] = incidents;
  summary["not_run"] = not_run;
  summary["unexpected"] = unexpected;
  summary["verdict"] = unexpected == 0 ? "pass" : "fail";
  summary["exit_code"] = unexpected == 0 ? 0 : 1;
  run["summary"] = std::move(summary);
  if (run.contains("pair_matrix")) run["pair_matrix"] = pair_matrix(a::array_at(run, "results"));
}

json pair_matrix(const json& results) {
  std::map<std::pair<long long, long long>, std::map<std::string, long long>> cells;
  for (const auto& r : results) {
    if (!r.is_object()) continue;
    const long long peer = a::index_value(a::member(r, "peer"));
    if (peer < 0) continue;
    ++cells[{a::index_value(a::member(r, "subject")), peer}][a::status_of(r)];
  }
  json matrix = json::array();
  for (const auto& [key, counts] : cells) {
    json c = json::object();
    for (const auto& [status, n] : counts) c[status] = n;
    matrix.push_back({{"producer", key.first}, {"consumer", key.second}, {"counts", c}});
  }
  return matrix;
}

json load_run(const std::string& path) {
  const std::string what = "run record";
  json run = detail::parse_json(what, path, detail::read_bytes(what, path));
  if (!run.is_object() || a::text(run, "schema") != "dlpack-validate/run") {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': not a dlpack-validate run record "
                                          "(schema is not \"dlpack-validate/run\")"),
                               what, path));
  }
  const json version = a::member(run, "schema_version");
  if (!version.is_number_integer() || version.get<long long>() != 1) {
    throw BadInput(fmt::format(FMT_STRING("{} '{}': unsupported schema_version {} "
                                          "(this build reads 1)"),
                               what, path, a::text_of(version)));
  }
  for (const char* key : {"subjects", "results"}) {
    if (!run.contains(key) || !run[key].is_array()) {
      throw BadInput(fmt::format(FMT_STRING("{} '{}': \"{}\" is missing or not an array"),
                                 what, path, key));
    }
  }
  return run;
}

}  // namespace dlpv::verdict
