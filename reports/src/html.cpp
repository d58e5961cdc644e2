// SPDX-License-Identifier: Apache-2.0
// html.cpp: the single-file HTML report (style reference B6).
//
// Everything is rendered here as static markup: archived reports are often served with a
// CSP that blocks scripts (a JS-built table would be empty), so the inline script only adds
// filtering and sorting. Every string from the record is escaped: library names, messages
// and captured output are controlled by the code under test.
#include <algorithm>
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

// Records up to this size (as embedded) are embedded whole.
constexpr std::size_t k_embed_limit = 256 * 1024;

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

// Multi-subject runs: which library each unexpected result and warning is charged to
// (charge_of): its own cases, the pairs where it broke the rule as producer or as consumer,
// and the pair findings no side alone can be blamed for.
std::string charged_table(const json& run) {
  const json& subjects = detail::array_at(run, "subjects");
  if (subjects.size() < 2) return {};
  const bool strict = detail::is_strict(run);
  struct Row { int own = 0, producer = 0, consumer = 0, warn = 0; };
  std::vector<Row> rows(subjects.size() + 1);  // the last: neither side alone
  bool any = false;
  for (const auto& r : detail::array_at(run, "results")) {
    const std::string st = detail::status_of(r);
    const bool unexpected = detail::is_unexpected(st, strict);
    if (!unexpected && st != "warn") continue;
    const Charge c = charge_of(run, r);
    if (c.subject < 0 && detail::text(r, "role") != "pair") continue;
    Row& row = c.subject < 0 || static_cast<std::size_t>(c.subject) >= subjects.size()
                   ? rows.back() : rows[static_cast<std::size_t>(c.subject)];
    any = true;
    if (st == "warn") ++row.warn;
    if (!unexpected) continue;
    if (c.side == "producer") ++row.producer;
    else if (c.side == "consumer") ++row.consumer;
    else ++row.own;
  }
  if (!any) return {};
  std::string out =
      "<table class=\"charged\"><caption>Which library is charged (a pair finding goes to the side whose "
      "phase or check broke the rule)</caption>\n<thead><tr><th>library</th><th>unexpected, own cases</th>"
      "<th>unexpected, as producer in pairs</th><th>unexpected, as consumer in pairs</th><th>warnings</th>"
      "</tr></thead>\n<tbody>\n";
  for (std::size_t i = 0; i <= subjects.size(); ++i) {
    const Row& row = rows[i];
    if (i == subjects.size() && row.own + row.warn == 0) continue;
    const std::string name = i < subjects.size() ? detail::subject_name(run, static_cast<long long>(i))
                                                 : std::string("pairs, neither side alone");
    out += fmt::format(FMT_STRING("<tr><th scope=\"row\">{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                                  "<td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n"),
                       html_escape(name), row.own, i < subjects.size() ? std::to_string(row.producer) : "",
                       i < subjects.size() ? std::to_string(row.consumer) : "", row.warn);
  }
  return out + "</tbody></table>\n";
}

// A subject run in generic mode (no built-in adapter: its notes say so first) is named on the first
// screen, with what an adapter would add (the note that says it), so that a reader does not take
// the generic run's skips for the library's gaps.
std::string generic_mode_lines(const json& run) {
  std::string out;
  const json& subjects = detail::member(run, "subjects");
  if (!subjects.is_array()) return out;
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    const json& notes = detail::member(subjects[i], "notes");
    if (!notes.is_array()) continue;
    bool generic = false;
    std::string adds;
    for (const json& n : notes) {
      if (!n.is_string()) continue;
      const std::string t = n.get<std::string>();
      if (t.rfind("no built-in adapter: generic mode", 0) == 0) generic = true;
      if (t.rfind("an adapter", 0) == 0) adds = t;
    }
    if (!generic) continue;
    out += "<p class=\"generic-mode\"><strong>" + html_escape(detail::subject_name(run, static_cast<long long>(i))) +
           " ran in generic mode</strong> (no built-in adapter: the validator made its arrays through its "
           "from_dlpack and read them back through their own __dlpack__). " + html_escape(adds) + "</p>\n";
  }
  return out;
}

std::string banner(const json& run, const std::vector<detail::AttentionGroup>& groups) {
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
  const bool strict = detail::is_strict(run);
  for (auto s : detail::k_statuses) {
    std::string n = detail::text(counts, std::string(s).c_str());
    std::string item = fmt::format(FMT_STRING("{}: {}"), s, n.empty() ? "0" : html_escape(n));
    // An unexpected status that occurred links to its first group under "Needs attention".
    if (detail::is_unexpected(s, strict) && !n.empty() && n != "0") {
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const detail::AttentionGroup& a) { return a.counts.count(std::string(s)) > 0; });
      item = "<a href=\"#" + (g == groups.end() ? std::string("unexpected") : g->anchor) + "\">" + item + "</a>";
    }
    out += fmt::format(FMT_STRING("<li class=\"st st-{}\">{}</li>"), s, item);
  }
  out += "</ul>\n" + generic_mode_lines(run) + charged_table(run);
  if (!groups.empty()) {
    constexpr std::size_t k_listed = 8;
    out += "<nav aria-label=\"unexpected results\"><p><a href=\"#unexpected\">Needs attention</a>, by failed "
           "requirement:</p>\n<ul class=\"groups\">";
    for (std::size_t i = 0; i < groups.size() && i < k_listed; ++i) {
      const auto& g = groups[i];
      out += fmt::format(FMT_STRING("<li><a href=\"#{}\">{}</a> {}</li>"), g.anchor,
                         g.requirement.empty() ? std::string("(no requirement)") : code(g.requirement),
                         html_escape(g.describe()));
    }
    if (groups.size() > k_listed) {
      out += fmt::format(FMT_STRING("<li><a href=\"#unexpected\">{} more</a></li>"), groups.size() - k_listed);
    }
    out += "</ul></nav>\n";
  }
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

/// Incidents (grouped) and cases never run.
std::string supervision_section(const json& run) {
  const auto groups = detail::incident_groups(run);
  const auto not_run = detail::not_run_lines(run);
  if (groups.empty() && not_run.empty()) return {};
  std::string out = "<section id=\"supervision\">\n<h3>Worker incidents and cases not run</h3>\n"
                    "<p>Incidents are charged to no case's verdict: a worker lost with no case in flight (the "
                    "case about to run was run again in a fresh worker), or the library writing into the "
                    "worker's event pipe. Each counts as unexpected.</p>\n<table>\n"
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

/// The whole record when it is small enough, else its head (no results): a report of a
/// thousand cases must stay a small file, and the JSON run record has everything.
std::string embedded_record(const json& run) {
  std::string full = detail::script_json(run);
  if (full.size() <= k_embed_limit) return full;
  json head = json::object();
  for (const auto& item : run.items()) {
    if (item.key() != "results" && item.key() != "requirements") head[item.key()] = item.value();
  }
  head["abridged"] = fmt::format(
      FMT_STRING("{} results and the requirement texts left out: the record is {} bytes, over the "
                 "{}-byte limit for embedding; see the JSON run record (--json)"),
      detail::array_at(run, "results").size(), full.size(), k_embed_limit);
  return detail::script_json(head);
}

}  // namespace

void write_html(const json& record, std::ostream& out) {
  json storage;
  const json& run = detail::with_summary(record, storage);
  const json& sum = detail::member(run, "summary");
  std::string verdict = detail::text(sum, "verdict") == "pass" ? "PASS" : "FAIL";
  const detail::Shown shown = detail::collapse_results(run);
  const auto groups = detail::attention_groups(run, shown);
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>dlpack-validate: " << verdict << " \xE2\x80\x94 " << html_escape(subject_names(run))
      << "</title>\n<style>" << detail::html_style() << "</style>\n</head>\n<body>\n"
      << banner(run, groups) << "<main>\n"
      << detail::html_attention(run, shown, groups, supervision_section(run))
      << subjects_section(run) << environment_section(run) << baseline_section(run)
      << detail::html_bench(run)
      << detail::html_requirement_matrix(run, shown) << detail::html_support_matrix(run)
      << detail::html_pair_matrix(run) << detail::html_results(run, shown) << "</main>\n"
      << "<script type=\"application/json\" id=\"run-record\">\n" << embedded_record(run)
      << "\n</script>\n<script>" << detail::html_script() << "</script>\n</body>\n</html>\n";
}

}  // namespace dlpv::reports
