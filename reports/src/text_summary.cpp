// reports/src/text_summary.cpp: counts by status per subject, then every non-pass result
// with expected vs observed and its requirement ids, then the verdict line.
// SPDX-License-Identifier: Apache-2.0
#include "common.hpp"
#include "dlpack_validate/reports.hpp"
#include <fmt/format.h>

#include <map>

namespace dlpv::reports {

namespace {
std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return s;
}
std::string join(const nlohmann::ordered_json& arr, const char* sep) {
  std::string s;
  for (const auto& v : arr) s += (s.empty() ? "" : sep) + v.get<std::string>();
  return s;
}
// Library text may hold anything: keep the summary on one line per field.
std::string one_line(std::string s, size_t max = 400) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}
}  // namespace

std::string text_summary(const nlohmann::ordered_json& rec) {
  std::string out;
  const auto& subjects = rec["subjects"];
  const auto& results = rec["results"];
  const auto& opt = rec["options"];
  out += fmt::format("dlpack-validate {}: {} results on {} subject(s) (isolation: {}, timeout {} s)\n",
                     rec["tool"].value("version", "?"), results.size(), subjects.size(),
                     opt.value("isolate", "?"), opt.value("timeout_s", 0.0));
  if (opt.contains("warning")) out += "WARNING: " + opt.value("warning", "") + "\n";
  if (rec.contains("environment") && rec["environment"].contains("cuda") &&
      rec["environment"]["cuda"].value("emulated", false))
    out += "NOTE: CUDA results come from an emulated driver (" + rec["environment"]["cuda"].value("detail", "") +
           "), not from a GPU\n";

  for (const auto& s : subjects) {
    const int idx = s.value("index", 0);
    std::map<std::string, int> counts;
    for (const auto& r : results)
      if (r.value("subject", -1) == idx) counts[r.value("status", "error")]++;
    out += fmt::format("\nsubject {}: {}  [DLPack {}{}]\n  {}\n", idx, s.value("name", "?"),
                       s.value("dlpack_version", "?"), s.value("legacy_only", false) ? ", legacy-only" : "",
                       s.value("path", ""));
    for (const auto& n : s["notes"]) out += "  note: " + one_line(n.get<std::string>()) + "\n";
    out += "  implements: " + join(s["capabilities"], " ") + "\n  ";
    for (const char* st : {"pass", "fail", "warn", "skip", "xfail", "xpass", "crash", "timeout", "error"})
      if (counts[st]) out += fmt::format("{} {}  ", st, counts[st]);
    out += "\n";
  }

  bool header = false;
  // Unexpected results and warnings in full, one block each.
  for (const auto& r : results) {
    const std::string st = r.value("status", "error");
    if (st == "pass" || st == "skip" || st == "xfail") continue;
    if (!header) { out += "\nresults other than pass:\n"; header = true; }
    const std::string subj = subjects.size() > 1 ? fmt::format(" (subject {}{})", r.value("subject", 0),
        r["peer"].is_number() ? fmt::format(" -> {}", r["peer"].get<int>()) : "") : "";
    out += fmt::format("  {:<7} {}{}  [{}]\n", upper(st), r.value("id", "?"), subj, join(r["requirements"], ", "));
    if (!r.value("message", "").empty()) out += "          " + one_line(r.value("message", "")) + "\n";
    if (!r.value("expected", "").empty()) out += "          expected: " + one_line(r.value("expected", "")) + "\n";
    if (!r.value("observed", "").empty()) out += "          observed: " + one_line(r.value("observed", "")) + "\n";
    if (r["signal"].is_string()) out += "          signal: " + r.value("signal", "") + ", phase: " + r.value("phase", "") + "\n";
  }
  // Deaths and protocol breaks with no case in flight, grouped by message; cases never run.
  const auto incidents = detail::incident_groups(rec);
  if (!incidents.empty()) out += "\nincidents (no case in flight, charged to no case; the case about to run was run again):\n";
  for (const auto& g : incidents) {
    out += fmt::format("  INCIDENT {:>4} x {}\n", g.count, one_line(g.message));
    if (!g.next_case.empty()) out += "               first before " + g.next_case + "\n";
  }
  for (const auto& n : detail::not_run_lines(rec)) {
    out += fmt::format("\nNOT RUN {} case{}: {}\n", n.count, n.count == 1 ? "" : "s", one_line(n.reason));
    if (!n.sample.empty()) out += "               e.g. " + n.sample + "\n";
  }
  // Skips and expected failures, grouped by reason (a legacy-only library has many).
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& r : results) {
    const std::string st = r.value("status", "error");
    if (st == "skip" || st == "xfail") groups[{st, r.value("message", "")}].push_back(r.value("id", "?"));
  }
  if (!groups.empty()) out += "\nskipped and expected failures, by reason:\n";
  for (const auto& [key, ids] : groups) {
    out += fmt::format("  {:<7} {:>4} x {}\n", upper(key.first), ids.size(), one_line(key.second, 200));
    std::string sample;
    for (size_t i = 0; i < ids.size() && i < 3; ++i) sample += (i ? ", " : "") + ids[i];
    out += "               e.g. " + sample + (ids.size() > 3 ? ", ..." : "") + "\n";
  }
  const auto& sum = rec["summary"];
  std::string counts;
  for (const auto& [k, v] : sum["counts"].items())
    if (v.get<int>()) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", v.get<int>(), k);
  for (const char* extra : {"incidents", "not_run"})
    if (sum.value(extra, 0) > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", sum.value(extra, 0),
                            std::string(extra) == "not_run" ? "not run" : "incidents");
  out += fmt::format("\nverdict: {} ({}; {} unexpected){}\n", upper(sum.value("verdict", "fail")), counts,
                     sum.value("unexpected", 0),
                     rec["duration_s"].is_number() && rec.value("duration_s", 0.0) > 0
                         ? fmt::format(" in {:.2f} s", rec.value("duration_s", 0.0)) : "");
  return out;
}

}  // namespace dlpv::reports
