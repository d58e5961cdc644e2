// SPDX-License-Identifier: Apache-2.0
// html.cpp: the single-file HTML report (style reference B6).
//
// Everything is rendered here as static markup: archived reports are often served with a
// CSP that blocks scripts (a JS-built table would be empty), so the inline script only adds
// filtering and sorting. Every string from the record is escaped: library names, messages
// and captured output are controlled by the code under test.
#include <ostream>

#include <fmt/format.h>

#include "bench_parts.hpp"
#include "common.hpp"
#include "dlpack_validate/reports.hpp"
#include "escape.hpp"
#include "html_parts.hpp"

namespace dlpv::reports {

using detail::json;
using detail::html_escape;

namespace {

constexpr std::size_t k_output_limit = 16 * 1024;

std::string row(const std::string& key, const std::string& value_html) {
  return "<tr><th scope=\"row\">" + html_escape(key) + "</th><td>" + value_html + "</td></tr>\n";
}

std::string code(const std::string& s) { return "<code>" + html_escape(s) + "</code>"; }

std::string subject_names(const json& run) {
  std::string out;
  for (const auto& s : detail::array_at(run, "subjects")) {
    std::string name = detail::text(s, "name");
    out += (out.empty() ? "" : ", ") + (name.empty() ? detail::text(s, "path") : name);
  }
  return out;
}

std::string banner(const json& run) {
  const json& sum = detail::member(run, "summary");
  bool pass = detail::text(sum, "verdict") == "pass";
  std::string out = fmt::format(
      FMT_STRING("<header id=\"verdict\" class=\"verdict verdict-{}\">\n<h1>{}</h1>\n<p>{}</p>\n"
                 "<p>{} unexpected of {} cases{}. Exit status {}.</p>\n<ul class=\"counts\">"),
      pass ? "pass" : "fail", pass ? "PASS" : "FAIL",
      html_escape("dlpack-validate " + detail::text(detail::member(run, "tool"), "version") +
                  " \xE2\x80\x94 " + subject_names(run)),
      html_escape(detail::text(sum, "unexpected")), html_escape(detail::text(sum, "total")),
      detail::is_strict(run) ? " (strict: warnings and unexpected passes count)" : "",
      html_escape(detail::text(sum, "exit_code")));
  const json& counts = detail::member(sum, "counts");
  for (auto s : detail::k_statuses) {
    std::string n = detail::text(counts, std::string(s).c_str());
    out += fmt::format(FMT_STRING("<li class=\"st st-{0}\">{0}: {1}</li>"), s, n.empty() ? "0" : html_escape(n));
  }
  out += "</ul>\n";
  const json& complete = detail::member(run, "complete");
  if (complete.is_boolean() && !complete.get<bool>()) {
    out += "<p class=\"notice\">Incomplete run: the validator was interrupted; results after "
           "the last one listed are missing.</p>\n";
  }
  const json& opts = detail::member(run, "options");
  if (!detail::text(opts, "warning").empty()) {
    out += "<p class=\"notice\">" + html_escape(detail::text(opts, "warning")) + "</p>\n";
  } else if (detail::text(opts, "isolate") == "none") {
    out += "<p class=\"notice\">Ran with --isolate=none: cases ran in the validator's own "
           "process, so a crash would have ended the run.</p>\n";
  }
  return out + "</header>\n";
}

std::string subjects_section(const json& run) {
  std::string out =
      "<section id=\"subjects\">\n<h2>Subjects</h2>\n<table>\n<thead><tr><th>#</th><th>name</th>"
      "<th>kind</th><th>path</th><th>DLPack</th><th>capabilities</th><th>notes</th></tr></thead>\n"
      "<tbody>\n";
  for (const auto& s : detail::array_at(run, "subjects")) {
    std::string caps, notes;
    for (const auto& c : detail::array_at(s, "capabilities")) {
      caps += (caps.empty() ? "" : " ") + code(detail::text_of(c));
    }
    std::string legacy = detail::legacy_note(s);
    if (!legacy.empty()) notes += "<li><strong>" + html_escape(legacy) + "</strong></li>";
    for (const auto& n : detail::array_at(s, "notes")) notes += "<li>" + html_escape(detail::text_of(n)) + "</li>";
    out += fmt::format(FMT_STRING("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                                  "<td>{}</td><td>{}</td></tr>\n"),
                       html_escape(detail::text(s, "index")), html_escape(detail::text(s, "name")),
                       html_escape(detail::text(s, "kind")), code(detail::text(s, "path")),
                       html_escape(detail::text(s, "dlpack_version")), caps,
                       notes.empty() ? std::string() : "<ul>" + notes + "</ul>");
  }
  return out + "</tbody></table>\n";
}

std::string environment_section(const json& run) {
  const json& tool = detail::member(run, "tool");
  const json& env = detail::member(run, "environment");
  const json& opts = detail::member(run, "options");
  std::string out = "<h2 id=\"environment\">Run and environment</h2>\n<table>\n";
  out += row("tool", html_escape(detail::text(tool, "name") + " " + detail::text(tool, "version")));
  out += row("command line", code(detail::shell_join(detail::member(run, "command_line"))));
  out += row("started", html_escape(detail::text(run, "started_at")));
  out += row("duration", html_escape(detail::seconds3(detail::member(run, "duration_s"))) + " s");
  for (const char* k : {"os", "kernel", "machine", "compiler", "hostname"}) {
    out += row(k, html_escape(detail::text(env, k)));
  }
  const json& cuda = detail::member(env, "cuda");
  out += row("CUDA", html_escape((detail::flag(cuda, "found") ? "found" : "not found") +
                                 (detail::text(cuda, "detail").empty() ? std::string()
                                                                       : ": " + detail::text(cuda, "detail"))));
  std::string filters;
  for (const auto& f : detail::array_at(opts, "filters")) filters += (filters.empty() ? "" : " ") + code(detail::text_of(f));
  out += row("filters", filters);
  out += row("timeout", html_escape(detail::text(opts, "timeout_s")) + " s");
  out += row("isolation", html_escape(detail::text(opts, "isolate")));
  out += row("strict", detail::is_strict(run) ? "yes" : "no");
  out += row("deterministic", detail::flag(run, "deterministic") ? "yes" : "no");
  out += row("baseline", detail::text(opts, "baseline").empty() ? "none" : code(detail::text(opts, "baseline")));
  return out + "</table>\n</section>\n";
}

std::string baseline_section(const json& run) {
  const json& br = detail::member(run, "baseline_report");
  if (!br.is_object()) return {};
  std::string out = "<section id=\"baseline\">\n<h2>Baseline</h2>\n<p>File " +
                    code(detail::text(br, "path")) + ", sha256 " + code(detail::text(br, "sha256")) + ".</p>\n";
  const json& xpass = detail::array_at(br, "xpass");
  out += fmt::format(FMT_STRING("<h3>Unexpected passes ({})</h3>\n"), xpass.size());
  if (!xpass.empty()) {
    out += "<ul>";
    for (const auto& id : xpass) out += "<li>" + code(detail::text_of(id)) + "</li>";
    out += "</ul>\n";
  }
  const json& stale = detail::array_at(br, "stale");
  out += fmt::format(FMT_STRING("<h3>Stale entries, matching no case ({})</h3>\n"), stale.size());
  if (!stale.empty()) {
    out += "<table><thead><tr><th>case</th><th>expect</th><th>reason</th><th>issue</th></tr></thead><tbody>\n";
    for (const auto& e : stale) {
      out += "<tr><td>" + code(detail::text(e, "case")) + "</td><td>" + html_escape(detail::text(e, "expect")) +
             "</td><td>" + html_escape(detail::text(e, "reason")) + "</td><td>" +
             html_escape(detail::text(e, "issue")) + "</td></tr>\n";
    }
    out += "</tbody></table>\n";
  }
  return out + "</section>\n";
}

std::string params_text(const json& r) {
  std::string s;
  const json& p = detail::member(r, "params");
  if (p.is_object()) {
    for (const auto& item : p.items()) {
      s += (s.empty() ? "" : " ") + item.key() + "=" + detail::text_of(item.value());
    }
  }
  return s;
}

std::string checks_table(const json& r) {
  std::string rows;
  for (const auto& c : detail::array_at(r, "checks")) {
    if (detail::text(c, "status") == "pass") continue;
    rows += "<tr><td>" + code(detail::text(c, "requirement")) + "</td><td>" +
            detail::status_badge(detail::text(c, "status")) + "</td><td>" +
            html_escape(detail::text(c, "message")) + "</td><td>" + html_escape(detail::text(c, "expected")) +
            "</td><td>" + html_escape(detail::text(c, "observed")) + "</td></tr>\n";
  }
  if (rows.empty()) return {};
  return "<table><thead><tr><th>check</th><th>status</th><th>message</th><th>expected</th>"
         "<th>observed</th></tr></thead><tbody>\n" + rows + "</tbody></table>\n";
}

std::string unexpected_article(const json& run, const json& r, std::size_t index) {
  std::string st = detail::status_of(r);
  std::string out = fmt::format(
      FMT_STRING("<article class=\"result\" id=\"{}\" data-status=\"{}\">\n<h3>{} {} "
                 "<small>on {}</small></h3>\n<p>{}</p>\n<table>\n"),
      detail::result_anchor(index), html_escape(st), detail::status_badge(st),
      code(detail::text(r, "id")), html_escape(detail::subject_label(run, r)),
      html_escape(detail::text(r, "title")));
  std::string reqs;
  for (const auto& id : detail::requirements_of(r)) {
    std::string summary = detail::requirement_summary(run, id);
    reqs += "<li><a href=\"#req-" + html_escape(id) + "\">" + code(id) + "</a>" +
            (summary.empty() ? "" : " " + html_escape(summary)) + "</li>";
  }
  out += row("requirements", reqs.empty() ? "" : "<ul>" + reqs + "</ul>");
  out += row("severity", html_escape(detail::text(r, "severity")));
  out += row("reason", html_escape(detail::reason_line(run, r)));
  // Expected vs observed first: that pair is what a maintainer acts on.
  for (const char* key : {"expected", "observed", "phase", "signal"}) {
    std::string v = detail::text(r, key);
    if (!v.empty()) out += row(key, html_escape(v));
  }
  out += row("role / area", html_escape(detail::text(r, "role") + " / " + detail::area_label(detail::text(r, "area"))));
  if (!params_text(r).empty()) out += row("parameters", html_escape(params_text(r)));
  const json& b = detail::member(r, "baseline");
  if (b.is_object()) {
    out += row("baseline", html_escape("expects " + detail::text(b, "expect") + " (" + detail::text(b, "case") +
                                       "): " + detail::text(b, "reason") + " " + detail::text(b, "issue")));
  }
  out += "</table>\n" + checks_table(r);
  std::string tail = detail::text(r, "output_tail");
  if (!tail.empty()) {
    out += "<p>Library output (last bytes):</p>\n<pre class=\"output\">" +
           html_escape(detail::bounded_tail(tail, k_output_limit)) + "</pre>\n";
  }
  return out + "</article>\n";
}

std::string results_row(const json& run, const json& r, std::size_t index) {
  std::string st = detail::status_of(r);
  std::string reqs;
  for (const auto& id : detail::requirements_of(r)) reqs += (reqs.empty() ? "" : " ") + code(id);
  return fmt::format(
      FMT_STRING("<tr id=\"{}\" data-status=\"{}\"><td data-key=\"{}\">{}</td><td>{}</td><td>{}</td>"
                 "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n"),
      detail::result_anchor(index), html_escape(st), detail::severity_rank(st), detail::status_badge(st),
      code(detail::text(r, "id")), html_escape(detail::subject_label(run, r)),
      html_escape(detail::area_label(detail::text(r, "area"))), html_escape(detail::text(r, "role")), reqs,
      html_escape(params_text(r)), html_escape(detail::one_line(detail::reason_line(run, r), 300)),
      html_escape(detail::seconds3(detail::member(r, "duration_s"))));
}

std::string results_sections(const json& run) {
  const bool strict = detail::is_strict(run);
  const json& results = detail::array_at(run, "results");
  std::string unexpected, others;
  std::size_t n_unexpected = 0, n_others = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (detail::is_unexpected(detail::status_of(results[i]), strict)) {
      unexpected += unexpected_article(run, results[i], i);
      ++n_unexpected;
    } else {
      others += results_row(run, results[i], i);
      ++n_others;
    }
  }
  std::string out = fmt::format(FMT_STRING("<section id=\"unexpected\">\n<h2>Unexpected results ({})</h2>\n"),
                                n_unexpected);
  out += n_unexpected == 0 ? "<p>No unexpected results.</p>\n" : unexpected;
  out += fmt::format(FMT_STRING("</section>\n<section id=\"results\">\n<h2>All other results ({})</h2>\n"),
                     n_others);
  out += "<table id=\"results-table\">\n<thead><tr><th>status</th><th>case</th><th>subject</th>"
         "<th>area</th><th>role</th><th>requirements</th><th>parameters</th><th>reason</th>"
         "<th>time (s)</th></tr></thead>\n<tbody>\n" + others + "</tbody></table>\n</section>\n";
  return out;
}

/// Deaths and protocol breaks with no case in flight (grouped), and cases never run.
std::string supervision_section(const json& run) {
  const auto groups = detail::incident_groups(run);
  const auto not_run = detail::not_run_lines(run);
  if (groups.empty() && not_run.empty()) return {};
  std::string out = "<section id=\"supervision\">\n<h2>Worker incidents and cases not run</h2>\n"
                    "<p>Incidents happened with no case in flight (charged to no case; the case about to "
                    "run was run again in a fresh worker). Each counts as unexpected.</p>\n<table>\n"
                    "<thead><tr><th>what</th><th>count</th><th>detail</th></tr></thead>\n<tbody>\n";
  for (const auto& g : groups) {
    std::string detail_html = html_escape(g.message);
    if (!g.next_case.empty()) detail_html += "<br><small>first before " + code(g.next_case) + "</small>";
    if (!g.output_tail.empty())
      detail_html += "<pre class=\"output\">" + html_escape(detail::bounded_tail(g.output_tail, 4096)) + "</pre>";
    out += fmt::format(FMT_STRING("<tr data-status=\"crash\"><td>incident ({})</td><td>{}</td><td>{}</td></tr>\n"),
                       html_escape(g.kind), g.count, detail_html);
  }
  for (const auto& n : not_run)
    out += fmt::format(FMT_STRING("<tr data-status=\"skip\"><td>not run</td><td>{}</td><td>{}{}</td></tr>\n"), n.count,
                       html_escape(n.reason), n.sample.empty() ? "" : "<br><small>e.g. " + html_escape(n.sample) + "</small>");
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace

void write_html(const json& record, std::ostream& out) {
  json storage;
  const json& run = detail::with_summary(record, storage);
  const json& sum = detail::member(run, "summary");
  std::string verdict = detail::text(sum, "verdict") == "pass" ? "PASS" : "FAIL";
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>dlpack-validate: " << verdict << " \xE2\x80\x94 " << html_escape(subject_names(run))
      << "</title>\n<style>" << detail::html_style() << "</style>\n</head>\n<body>\n"
      << banner(run) << "<main>\n"
      << subjects_section(run) << environment_section(run) << baseline_section(run)
      << detail::html_bench(run)
      << detail::html_requirement_matrix(run) << detail::html_support_matrix(run)
      << detail::html_pair_matrix(run) << supervision_section(run) << results_sections(run) << "</main>\n"
      << "<script type=\"application/json\" id=\"run-record\">\n" << detail::script_json(run)
      << "\n</script>\n<script>" << detail::html_script() << "</script>\n</body>\n</html>\n";
}

}  // namespace dlpv::reports
