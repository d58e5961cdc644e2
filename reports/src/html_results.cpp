// SPDX-License-Identifier: Apache-2.0
// html_results.cpp: where each result appears in the HTML report.
//
// Unexpected results come first, in "Needs attention": grouped by the requirement that
// failed, then by shared cause (status, message, expected), single-subject cases before
// pairs, each result a one-line <details> holding its full record. Every other result is one
// line in a folded list per area and status (and reason, for skips and expected failures),
// so a run of a thousand passes and skips costs a few lines of screen and a few hundred
// bytes per result. Identical results (same case, status and output on several subjects, as
// pair cases run both ways usually are) are shown once, with every subject named.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "escape.hpp"
#include "html_parts.hpp"

namespace dlpv::reports::detail {

namespace {

constexpr std::size_t k_output_limit = 16 * 1024;
// More distinct reasons than this for one status of one area: one list, a reason per line.
constexpr std::size_t k_max_reason_buckets = 6;

std::string code(const std::string& s) { return "<code>" + html_escape(s) + "</code>"; }

std::string row(const std::string& key, const std::string& value_html) {
  return "<tr><th scope=\"row\">" + html_escape(key) + "</th><td>" + value_html + "</td></tr>\n";
}

bool is_pair(const json& r) { return text(r, "role") == "pair"; }

std::string params_text(const json& r) {
  std::string s;
  const json& p = member(r, "params");
  if (p.is_object()) {
    for (const auto& item : p.items()) s += (s.empty() ? "" : " ") + item.key() + "=" + text_of(item.value());
  }
  return s;
}

std::string collapse_key(const json& run, const json& r) {
  std::string key;
  for (const std::string& part : {text(r, "id"), status_of(r), reason_line(run, r), text(r, "expected"),
                                  text(r, "observed"), text(r, "output_tail")}) {
    key += part;
    key += '\x1f';
  }
  return key;
}

/// "dlpv-reference 1.0; mutant x" for a collapsed set.
std::string subjects_of(const json& run, const std::vector<std::size_t>& members) {
  const json& results = array_at(run, "results");
  std::string out;
  for (auto i : members) out += (out.empty() ? "" : "; ") + subject_label(run, results[i]);
  return out;
}

/// The message a cause is keyed and introduced by.
std::string cause_message(const json& run, const json& r) {
  std::string st = status_of(r);
  if (st == "crash" || st == "timeout" || st == "xpass") return reason_line(run, r);
  std::string m = text(r, "message");
  return m.empty() ? text(r, "title") : m;
}

std::string checks_table(const json& r) {
  std::string rows;
  for (const auto& c : array_at(r, "checks")) {
    if (text(c, "status") == "pass") continue;
    rows += "<tr><td>" + code(text(c, "requirement")) + "</td><td>" + status_badge(text(c, "status")) +
            "</td><td>" + html_escape(text(c, "message")) + "</td><td>" + html_escape(text(c, "expected")) +
            "</td><td>" + html_escape(text(c, "observed")) + "</td></tr>\n";
  }
  if (rows.empty()) return {};
  return "<table><thead><tr><th>check</th><th>status</th><th>message</th><th>expected</th>"
         "<th>observed</th></tr></thead><tbody>\n" + rows + "</tbody></table>\n";
}

/// The full record of one (collapsed) unexpected result, shown inside its <details>.
std::string result_detail(const json& run, const std::vector<std::size_t>& members) {
  const json& r = array_at(run, "results")[members.front()];
  std::string out = "<p>" + html_escape(text(r, "title")) + "</p>\n<table>\n";
  out += row(members.size() > 1 ? fmt::format(FMT_STRING("subjects ({})"), members.size()) : "subject",
             html_escape(subjects_of(run, members)));
  std::string reqs;
  for (const auto& id : requirements_of(r)) {
    std::string summary = requirement_summary(run, id);
    const std::string link = requirement_link(run, id);
    reqs += "<li><a href=\"#req-" + html_escape(id) + "\" title=\"" + html_escape(explain_command(run) + " " + id) +
            "\">" + code(id) + "</a>" +
            (summary.empty() ? "" : " " + html_text_with_code(summary)) +
            (link.empty() ? " <small>(in full: <code>" + html_escape(explain_command(run) + " " + id) + "</code>)</small>"
                          : " <small>(<a href=\"" + html_escape(link) + "\">requirement</a>)</small>") +
            "</li>";
  }
  out += row("requirements", reqs.empty() ? "" : "<ul>" + reqs + "</ul>");
  out += row("severity", html_escape(text(r, "severity")));
  // The reason is the heading of the cause this record sits under (a crash's, say) unless it
  // differs from it: not said twice.
  if (reason_line(run, r) != cause_message(run, r)) out += row("reason", html_escape(reason_line(run, r)));
  if (!charge_text(run, r).empty()) out += row("charged", html_escape(charge_text(run, r)));
  if (!rerun_command(run, r).empty()) out += row("run it again", code(rerun_command(run, r)));
  if (!text(member(r, "baseline"), "confirmed_by").empty())
    out += row("confirmed by", code("python " + text(member(r, "baseline"), "confirmed_by")));
  // Expected vs observed first: that pair is what a maintainer acts on.
  for (const char* key : {"expected", "observed", "phase", "signal"}) {
    std::string v = text(r, key);
    if (!v.empty()) out += row(key, html_escape(v));
  }
  out += row("role / area", html_escape(text(r, "role") + " / " + area_label(text(r, "area"))));
  if (!params_text(r).empty()) out += row("parameters", html_escape(params_text(r)));
  const json& b = member(r, "baseline");
  if (b.is_object()) {
    out += row("baseline", html_escape("expects " + text(b, "expect") + " (" + text(b, "case") + "): " +
                                       text(b, "reason") + " " + text(b, "issue")));
  }
  out += "</table>\n" + checks_table(r);
  std::string tail = text(r, "output_tail");
  if (!tail.empty()) {
    out += "<p>Library output (last bytes):</p>\n<pre class=\"output\">" +
           html_escape(bounded_tail(tail, k_output_limit)) + "</pre>\n";
  }
  return out;
}

}  // namespace

Shown collapse_results(const json& run) {
  Shown s;
  const json& results = array_at(run, "results");
  std::map<std::string, std::size_t> seen;
  s.group_of.resize(results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    auto [it, fresh] = seen.emplace(collapse_key(run, results[i]), s.groups.size());
    if (fresh) s.groups.emplace_back();
    s.groups[it->second].push_back(i);
    s.group_of[i] = it->second;
  }
  return s;
}

std::string Shown::anchor(std::size_t result) const {
  return result_anchor(groups[group_of[result]].front());
}

std::vector<AttentionGroup> attention_groups(const json& run, const Shown& shown) {
  const json& results = array_at(run, "results");
  const bool strict = is_strict(run);
  std::vector<AttentionGroup> out;
  for (std::size_t g = 0; g < shown.groups.size(); ++g) {
    const json& r = results[shown.groups[g].front()];
    std::string st = status_of(r);
    if (!is_unexpected(st, strict)) continue;
    std::string req = failing_requirement(r);
    auto grp = std::find_if(out.begin(), out.end(), [&](const AttentionGroup& a) { return a.requirement == req; });
    if (grp == out.end()) {
      out.push_back(AttentionGroup{});
      grp = std::prev(out.end());
      grp->requirement = req;
    }
    std::string msg = cause_message(run, r), expected = text(r, "expected");
    auto cause = std::find_if(grp->causes.begin(), grp->causes.end(), [&](const AttentionCause& c) {
      return c.status == st && c.message == msg && c.expected == expected;
    });
    if (cause == grp->causes.end()) {
      grp->causes.push_back(AttentionCause{st, msg, expected, {}, 0, false});
      cause = std::prev(grp->causes.end());
    }
    cause->groups.push_back(g);
    cause->results += shown.groups[g].size();
    cause->single = cause->single || !is_pair(r);
    grp->results += shown.groups[g].size();
    grp->counts[st] += static_cast<int>(shown.groups[g].size());
    grp->single = grp->single || !is_pair(r);
  }
  // Single-subject results before pairs (a pair failing usually repeats a single-subject
  // failure of one of its ends); otherwise first-seen order, which is the run's order.
  auto single_first = [&](auto& v) {
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.single && !b.single; });
  };
  single_first(out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].anchor = fmt::format(FMT_STRING("att-{}"), i + 1);
    single_first(out[i].causes);
    for (auto& c : out[i].causes) {
      std::stable_sort(c.groups.begin(), c.groups.end(), [&](std::size_t a, std::size_t b) {
        return !is_pair(results[shown.groups[a].front()]) && is_pair(results[shown.groups[b].front()]);
      });
    }
  }
  return out;
}

std::string AttentionGroup::describe() const { return count_breakdown(results, "result", counts); }

std::string html_attention(const json& run, const Shown& shown, const std::vector<AttentionGroup>& groups,
                           const std::string& supervision_html) {
  const json& results = array_at(run, "results");
  std::size_t n = 0;
  for (const auto& g : groups) n += g.results;
  std::string out = fmt::format(
      FMT_STRING("<section id=\"unexpected\">\n<h2>Needs attention: {} unexpected result{}</h2>\n"), n,
      n == 1 ? "" : "s");
  if (n == 0 && supervision_html.empty()) return out + "<p>No unexpected results.</p>\n</section>\n";
  if (n > 0) {
    out += "<p>Grouped by the requirement that failed, then by shared cause; single-subject cases "
           "before pairs. A case with the same outcome on several subjects is listed once. Open a "
           "case for its full record.</p>\n";
  }
  out += supervision_html;
  for (const auto& g : groups) {
    std::string summary = requirement_summary(run, g.requirement);
    std::string title = g.requirement.empty()
                            ? std::string("(no requirement named)")
                            : "<a href=\"#req-" + html_escape(g.requirement) + "\">" + code(g.requirement) + "</a>";
    out += fmt::format(FMT_STRING("<section class=\"att\" id=\"{}\">\n<h3>{}{} <small>&mdash; {}</small></h3>\n"),
                       g.anchor, title, summary.empty() ? "" : " " + html_text_with_code(summary),
                       html_escape(g.describe()));
    for (std::size_t c = 0; c < g.causes.size(); ++c) {
      const auto& cause = g.causes[c];
      const json& first = results[shown.groups[cause.groups.front()].front()];
      out += fmt::format(FMT_STRING("<div class=\"cause\" id=\"{}-{}\" data-status=\"{}\">\n<h4>{} &times;{}: {}</h4>\n"),
                         g.anchor, c + 1, html_escape(cause.status), status_badge(cause.status), cause.results,
                         html_escape(one_line(cause.message, 400)));
      std::string eo;
      if (!cause.expected.empty()) eo += "<dt>expected</dt><dd>" + html_escape(cause.expected) + "</dd>";
      if (!text(first, "observed").empty()) {
        eo += "<dt>observed" + std::string(cause.groups.size() > 1 ? " (first case)" : "") + "</dt><dd>" +
              html_escape(one_line(text(first, "observed"), 600)) + "</dd>";
      }
      if (!eo.empty()) out += "<dl class=\"eo\">" + eo + "</dl>\n";
      out += "<ul class=\"affected\">\n";
      for (auto gi : cause.groups) {
        const auto& members = shown.groups[gi];
        const json& r = results[members.front()];
        std::string observed = text(r, "observed");
        out += fmt::format(
            FMT_STRING("<li id=\"{}\"><details><summary>{}{} <small>on {}</small>{}</summary>\n{}</details></li>\n"),
            result_anchor(members.front()), code(text(r, "id")),
            members.size() > 1 ? fmt::format(FMT_STRING(" &times;{}"), members.size()) : std::string(),
            html_escape(subjects_of(run, members)),
            observed.empty() || gi == cause.groups.front()
                ? std::string()
                : " <small class=\"obs\">observed: " + html_escape(one_line(observed, 90)) + "</small>",
            result_detail(run, members));
      }
      out += "</ul>\n</div>\n";
    }
    out += "</section>\n";
  }
  // What to do about them, after them (the first group stays on the first screen).
  const auto steps = next_steps(run);
  if (!steps.empty()) {
    out += "<div id=\"next-steps\"><h3>Next steps</h3>\n<ul>\n";
    for (const auto& step : steps) out += "<li>" + html_escape(step) + "</li>\n";
    out += "</ul></div>\n";
  }
  return out + "</section>\n";
}

std::string html_results(const json& run, const Shown& shown) {
  const json& results = array_at(run, "results");
  const bool strict = is_strict(run);
  // area -> status -> reason -> collapsed groups
  using Buckets = std::map<std::string, std::vector<std::size_t>>;
  std::map<std::pair<std::size_t, std::string>, std::map<int, std::pair<std::string, Buckets>>> areas;
  std::map<std::pair<std::size_t, std::string>, std::size_t> area_totals;
  for (std::size_t gi = 0; gi < shown.groups.size(); ++gi) {
    const json& r = results[shown.groups[gi].front()];
    std::string area = text(r, "area"), st = status_of(r);
    std::pair<std::size_t, std::string> akey{area_index(area), area};
    auto& slot = areas[akey][-severity_rank(st)];  // worst status first
    slot.first = st;
    std::string reason = (st == "pass" || is_unexpected(st, strict)) ? std::string()
                                                                     : one_line(reason_line(run, r), 300);
    slot.second[reason].push_back(gi);
    area_totals[akey] += shown.groups[gi].size();
  }
  std::string out = fmt::format(
      FMT_STRING("<section id=\"results\">\n<h2>All results by area ({})</h2>\n<p>Folded by status "
                 "(and by reason for skips and expected failures); a case with the same outcome on several "
                 "subjects is one line. Unexpected results link to their entry under Needs attention.</p>\n"),
      results.size());
  if (areas.empty()) return out + "<p>No results.</p>\n</section>\n";
  for (auto& [akey, by_status] : areas) {
    Tally t;
    for (auto& [rank, slot] : by_status) {
      for (auto& [reason, gis] : slot.second) {
        for (auto gi : gis) {
          for (std::size_t k = 0; k < shown.groups[gi].size(); ++k) t.add(slot.first);
        }
      }
    }
    out += fmt::format(FMT_STRING("<h3 id=\"area-{}\">{} <small>&mdash; {}</small></h3>\n"),
                       html_escape(sanitize_identifier(akey.second.empty() ? "other" : akey.second)),
                       html_escape(area_label(akey.second)), html_escape(t.describe()));
    for (auto& [rank, slot] : by_status) {
      const std::string& st = slot.first;
      const bool unexpected = is_unexpected(st, strict);
      Buckets buckets = std::move(slot.second);
      bool per_line_reason = buckets.size() > k_max_reason_buckets;
      if (per_line_reason) {  // too many distinct reasons: one list, each line says its own
        std::vector<std::size_t> all;
        for (auto& [reason, gis] : buckets) all.insert(all.end(), gis.begin(), gis.end());
        std::sort(all.begin(), all.end());
        buckets = Buckets{{std::string(), all}};
      }
      for (auto& [reason, gis] : buckets) {
        std::size_t count = 0;
        for (auto gi : gis) count += shown.groups[gi].size();
        std::string summary = fmt::format(FMT_STRING("{}{}: {}"), status_badge(st),
                                          count == area_totals[akey] && st == "skip" ? " (all)" : "", count);
        if (!reason.empty()) summary += " &mdash; " + html_escape(reason);
        if (unexpected) summary += " &mdash; see Needs attention";
        out += fmt::format(FMT_STRING("<details data-status=\"{}\"><summary>{}</summary>\n<ul class=\"ids\">"),
                           html_escape(st), summary);
        for (auto gi : gis) {
          const auto& members = shown.groups[gi];
          const json& r = results[members.front()];
          std::string line = code(text(r, "id"));
          if (unexpected) line = "<a href=\"#" + result_anchor(members.front()) + "\">" + line + "</a>";
          if (members.size() > 1) line += fmt::format(FMT_STRING(" &times;{}"), members.size());
          line += " <small>" + html_escape(subjects_of(run, members)) + "</small>";
          if (per_line_reason) line += " &mdash; " + html_escape(one_line(reason_line(run, r), 300));
          out += unexpected ? "<li>" + line + "</li>"
                            : "<li id=\"" + result_anchor(members.front()) + "\">" + line + "</li>";
        }
        out += "</ul></details>\n";
      }
    }
  }
  return out + "</section>\n";
}

}  // namespace dlpv::reports::detail
