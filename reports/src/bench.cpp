// SPDX-License-Identifier: Apache-2.0
// bench.cpp: the "bench" section of a record: baseline comparison (regression warnings), the
// terminal table, and the pieces the HTML writer uses. Pure functions of the record.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "bench_parts.hpp"
#include "dlpack_validate/reports.hpp"
#include "escape.hpp"
#include "html_parts.hpp"

namespace dlpv::reports {

using detail::json;

namespace detail {

namespace {

bool number(const json& j, const char* key, double& out) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return false;
  out = it->get<double>();
  return std::isfinite(out);
}

std::string ns(const json& stats, const char* key) {
  double v = 0;
  return number(stats, key, v) ? fmt::format(FMT_STRING("{:.1f}"), v) : std::string();
}


}  // namespace


std::string batch_text(const json& settings) {
  const std::string n = text(settings, "iterations");
  return fmt::format(FMT_STRING("{} batches of {}"), text(settings, "batches"),
                     n.empty() || n == "0" ? "operations sized to about " + text(settings, "target_batch_ms") + " ms"
                                           : n + " operations");
}

std::vector<BenchRow> bench_rows(const json& run) {
  std::vector<BenchRow> rows;
  for (const auto& r : array_at(bench_of(run), "routes")) {
    BenchRow row;
    row.route = text(r, "route");
    row.subjects = route_subjects(run, r);
    row.title = text(r, "title");
    row.status = text(r, "status");
    row.reason = text(r, "reason");
    const json& net = member(r, "net_ns");
    const json& raw = member(r, "raw_ns");
    row.net_median = ns(net, "median");
    row.net_p10 = ns(net, "p10");
    row.net_p90 = ns(net, "p90");
    row.raw_median = ns(raw, "median");
    row.raw_p10 = ns(raw, "p10");
    row.raw_p90 = ns(raw, "p90");
    row.iterations = text(r, "iterations");
    row.batches = text(r, "batches");
    double b = 0, ratio = 0;
    if (number(r, "baseline_net_median_ns", b)) row.baseline = fmt::format(FMT_STRING("{:.1f}"), b);
    if (number(r, "ratio", ratio)) row.ratio = fmt::format(FMT_STRING("{:.2f}x"), ratio);
    row.regression = flag(r, "regression");
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string bench_calibration_line(const json& run) {
  const json& cal = member(bench_of(run), "calibration");
  if (!cal.is_object()) return {};
  const json& raw = member(cal, "raw_ns");
  return fmt::format(FMT_STRING("harness overhead (empty route, subtracted from every route): {} ns/op "
                                "[p10 {} .. p90 {}], {} ops x {} batches"),
                     ns(raw, "median"), ns(raw, "p10"), ns(raw, "p90"), text(cal, "iterations"),
                     text(cal, "batches"));
}


std::vector<std::string> bench_warning_lines(const json& run) {
  std::vector<std::string> out;
  for (const auto& w : array_at(bench_of(run), "warnings"))
    out.push_back(text(w, "route") + " on " + text(w, "subjects") + ": " + text(w, "message"));
  return out;
}

std::string html_bench(const json& run) {
  const json& b = bench_of(run);
  if (!b.is_object()) return {};
  const json& settings = member(b, "settings");
  std::string out = "<section id=\"bench\">\n<h2>Exchange overhead (bench)</h2>\n<p>" +
                    html_escape(fmt::format(
                        "Nanoseconds per operation over repeated batches (median, p10, p90 of the "
                        "per-batch figures), measured {}; {}.",
                        text(b, "process").empty() ? std::string("in a worker process") : text(b, "process"),
                        batch_text(settings))) +
                    "</p>\n<p>" + html_escape(bench_calibration_line(run)) + "</p>\n";
  if (!text(b, "error").empty())
    out += "<p class=\"notice\">" + html_escape("The bench did not finish: " + text(b, "error")) + "</p>\n";
  const json& base = member(b, "baseline");
  if (base.is_object())
    out += "<p>" + html_escape(fmt::format("Compared with {} (threshold {}x on the net median): {} regression(s).",
                                           text(base, "path"), text(base, "threshold"), bench_warnings(run))) +
           "</p>\n";
  std::string warn;
  for (const auto& line : bench_warning_lines(run)) warn += "<li>" + html_escape(line) + "</li>";
  if (!warn.empty()) out += "<ul class=\"notice\">" + warn + "</ul>\n";
  out += "<table id=\"bench-table\">\n<thead><tr><th>route</th><th>subjects</th><th>status</th>"
         "<th>net median</th><th>net p10</th><th>net p90</th><th>raw median</th><th>raw p10</th>"
         "<th>raw p90</th><th>ops/batch</th><th>baseline net</th><th>ratio</th><th>what / why</th>"
         "</tr></thead>\n<tbody>\n";
  for (const BenchRow& r : bench_rows(run)) {
    const std::string st = r.status == "ok" ? (r.regression ? "warn" : "pass") : r.status == "unavailable" ? "skip" : "error";
    out += "<tr><td><code>" + html_escape(r.route) + "</code></td><td>" + html_escape(r.subjects) +
           "</td><td>" + status_badge(st) + " " + html_escape(r.regression ? "regression" : r.status) + "</td>";
    for (const std::string* v : {&r.net_median, &r.net_p10, &r.net_p90, &r.raw_median, &r.raw_p10,
                                 &r.raw_p90, &r.iterations, &r.baseline, &r.ratio})
      out += "<td class=\"num\">" + html_escape(*v) + "</td>";
    out += "<td>" + html_escape(r.reason.empty() ? r.title : r.reason) + "</td></tr>\n";
  }
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace detail

std::string bench_text(const json& run) {
  using namespace detail;
  const json& b = bench_of(run);
  std::string out = fmt::format(FMT_STRING("dlpack-validate {} bench: {} subject(s), measured {}\n"),
                                text(member(run, "tool"), "version"), array_at(run, "subjects").size(),
                                text(b, "process").empty() ? "in a worker process" : text(b, "process"));
  for (const auto& s : array_at(run, "subjects"))
    out += fmt::format(FMT_STRING("  subject {}: {}  [DLPack {}]  {}\n"), text(s, "index"), text(s, "name"),
                       text(s, "dlpack_version"), text(s, "path"));
  out += "ns per operation: median [p10 .. p90] of the per-batch figures; net = raw - harness overhead\n";
  out += bench_calibration_line(run) + "\n";
  if (!text(b, "error").empty()) out += "ERROR: the bench did not finish: " + text(b, "error") + "\n";

  const std::vector<BenchRow> rows = bench_rows(run);
  std::vector<std::vector<std::string>> table = {
      {"route", "subjects", "net median", "[p10 .. p90]", "raw median", "[p10 .. p90]", "ops x batches", "vs baseline"}};
  std::vector<const BenchRow*> other;
  for (const BenchRow& r : rows) {
    if (r.status != "ok") {
      other.push_back(&r);
      continue;
    }
    table.push_back({r.route, r.subjects, r.net_median, "[" + r.net_p10 + " .. " + r.net_p90 + "]", r.raw_median,
                     "[" + r.raw_p10 + " .. " + r.raw_p90 + "]", r.iterations + " x " + r.batches,
                     r.ratio.empty() ? "" : r.ratio + (r.regression ? " REGRESSION" : "")});
  }
  std::vector<std::size_t> width(table[0].size(), 0);
  auto cells = [](const std::string& s) {  // display width: count UTF-8 lead bytes
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
  };
  for (const auto& line : table)
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], cells(line[i]));
  out += "\n";
  for (const auto& line : table) {
    std::string l;
    for (std::size_t i = 0; i < line.size(); ++i) {
      const bool right = i >= 2 && i <= 5;
      const std::string pad(width[i] - cells(line[i]), ' ');
      l += (i ? "  " : "") + (right ? pad + line[i] : line[i] + (i + 1 < line.size() ? pad : ""));
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  if (!other.empty()) out += "\nnot measured:\n";
  for (const BenchRow* r : other)
    out += fmt::format(FMT_STRING("  {:<11} {} on {}: {}\n"), r->status == "error" ? "ERROR" : "unavailable",
                       r->route, r->subjects, one_line(r->reason, 300));
  const json& base = member(b, "baseline");
  if (base.is_object()) {
    if (text(base, "mode") == "compare")
      out += fmt::format(FMT_STRING("\ncompared with {} (ratios only, no verdict): {} route(s) compared\n"),
                         text(base, "path"), text(base, "compared"));
    else
      out += fmt::format(FMT_STRING("\ncompared with {} (threshold {}x): {} route(s) compared, {} regression(s)\n"),
                         text(base, "path"), text(base, "threshold"), text(base, "compared"), bench_warnings(run));
    // The ratios in one line: their geometric mean and the extremes, naming the routes.
    double log_sum = 0;
    size_t n = 0;
    const json* lo = nullptr;
    const json* hi = nullptr;
    for (const auto& r : array_at(b, "routes")) {
      auto it = r.find("ratio");
      if (it == r.end() || !it->is_number() || it->get<double>() <= 0) continue;
      log_sum += std::log(it->get<double>());
      ++n;
      if (!lo || it->get<double>() < (*lo)["ratio"].get<double>()) lo = &r;
      if (!hi || it->get<double>() > (*hi)["ratio"].get<double>()) hi = &r;
    }
    if (n > 0)
      out += fmt::format(FMT_STRING("  net median now / then: geometric mean {:.3f}; lowest {:.3f} ({} on {}); "
                                    "highest {:.3f} ({} on {})\n"),
                         std::exp(log_sum / static_cast<double>(n)), (*lo)["ratio"].get<double>(), text(*lo, "route"),
                         route_subjects(run, *lo), (*hi)["ratio"].get<double>(), text(*hi, "route"),
                         route_subjects(run, *hi));
  }
  for (const auto& line : bench_warning_lines(run)) out += "  WARN " + line + "\n";

  std::size_t measured = 0;
  for (const BenchRow& r : rows) measured += r.status == "ok";
  const json& sum = member(run, "summary");
  double duration = 0;
  out += fmt::format(FMT_STRING("\nverdict: {} ({} route(s) measured, {} not available, {} error(s), {} "
                                "regression(s); {} unexpected){}\n"),
                     text(sum, "verdict") == "pass" ? "PASS" : "FAIL", measured, other.size() - bench_errors(run) +
                         (text(b, "error").empty() ? 0 : 1),
                     bench_errors(run), bench_warnings(run), text(sum, "unexpected"),
                     number(run, "duration_s", duration) && duration > 0 ? fmt::format(FMT_STRING(" in {:.2f} s"), duration)
                                                                          : std::string());
  return detail::terminal_text(out, false);  // library names and messages, terminal-safe
}

}  // namespace dlpv::reports
