// SPDX-License-Identifier: Apache-2.0
// html_matrices.cpp: the three cross-tabulations of the HTML report:
// requirement -> cases, dtype x layout (x version) per producer subject, and
// producer x consumer pairs. Each cell shows the worst status as a word plus a breakdown,
// so a single failing variant is never hidden behind a majority of passes.
#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "escape.hpp"
#include "dlpack_validate/ids.hpp"
#include "html_parts.hpp"

namespace dlpv::reports::detail {

std::string status_badge(const std::string& status) {
  return fmt::format(FMT_STRING("<span class=\"st st-{0}\">{0}</span>"), html_escape(status));
}

std::string result_anchor(std::size_t index) { return fmt::format(FMT_STRING("r-{}"), index); }

void Tally::add(const std::string& status) {
  ++counts[status];
  ++total;
  if (worst.empty() || severity_rank(status) > severity_rank(worst)) worst = status;
}

std::string count_breakdown(std::size_t n, const char* noun, const std::map<std::string, int>& counts) {
  std::string s = fmt::format(FMT_STRING("{} {}{}"), n, noun, n == 1 ? "" : "s");
  std::string sep = ": ";
  for (auto st : k_statuses) {
    auto it = counts.find(std::string(st));
    if (it == counts.end()) continue;
    s += fmt::format(FMT_STRING("{}{} {}"), sep, it->second, st);
    sep = ", ";
  }
  return s;
}

std::string Tally::describe() const { return count_breakdown(static_cast<std::size_t>(total), "case", counts); }

std::string Tally::cell() const {
  if (total == 0) return "<td class=\"none\">—</td>";
  std::string extra = total == 1 ? std::string() : "<br><small>" + html_escape(describe()) + "</small>";
  return fmt::format(FMT_STRING("<td class=\"st-{0}\" title=\"{1}\">{0}{2}</td>"),
                     html_escape(worst), html_escape(describe()), extra);
}

namespace {

// ---- requirement matrix ------------------------------------------------------------------

// CAP-2 before CAP-10: compare the prefix, then the number after the dash.
bool requirement_less(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    auto dash = s.rfind('-');
    long n = -1;
    if (dash != std::string::npos) {
      try {
        n = std::stol(s.substr(dash + 1));
      } catch (...) {
      }
    }
    return std::make_pair(s.substr(0, dash), n);
  };
  auto x = split(a), y = split(b);
  if (x != y) return x < y;
  return a < b;
}

std::string requirement_area(const json& run, const std::string& id, const json& first_result) {
  if (run.contains("requirements") && run["requirements"].is_object()) {
    auto it = run["requirements"].find(id);
    if (it != run["requirements"].end() && !text(*it, "area").empty()) return text(*it, "area");
  }
  std::string a = dlpv::area_of(id);
  return a.empty() ? text(first_result, "area") : a;
}

/// The cases of one requirement by status; unexpected and other non-pass cases link to where
/// they are shown, passes are plain ids (there can be hundreds). Identical results on several
/// subjects are one id with a count.
std::string cases_details(const json& run, const Shown& shown, const std::vector<std::size_t>& idx) {
  const json& results = array_at(run, "results");
  std::map<int, std::pair<std::string, std::vector<std::size_t>>> by_status;  // worst first
  std::set<std::size_t> seen;
  for (auto i : idx) {
    std::size_t g = shown.group_of[i];
    if (!seen.insert(g).second) continue;
    std::string st = status_of(results[i]);
    auto& slot = by_status[-severity_rank(st)];
    slot.first = st;
    slot.second.push_back(g);
  }
  std::string out = fmt::format(FMT_STRING("<details><summary>{} case{}</summary>"), idx.size(),
                                idx.size() == 1 ? "" : "s");
  for (const auto& [rank, slot] : by_status) {
    std::size_t n = 0;
    for (auto g : slot.second) n += shown.groups[g].size();
    out += fmt::format(FMT_STRING("<p>{} ({}): "), status_badge(slot.first), n);
    bool first = true;
    for (auto g : slot.second) {
      const auto& members = shown.groups[g];
      std::string id = "<code>" + html_escape(text(results[members.front()], "id")) + "</code>";
      if (slot.first != "pass") id = "<a href=\"#" + result_anchor(members.front()) + "\">" + id + "</a>";
      out += (first ? "" : ", ") + id;
      if (members.size() > 1) out += fmt::format(FMT_STRING(" &times;{}"), members.size());
      first = false;
    }
    out += "</p>";
  }
  return out + "</details>";
}

}  // namespace

std::string html_requirement_matrix(const json& run, const Shown& shown) {
  std::map<std::string, std::vector<std::size_t>> cases;  // requirement -> result indexes
  const json& results = array_at(run, "results");
  std::set<std::string> present;  // statuses that occur in the run: one count column each
  for (std::size_t i = 0; i < results.size(); ++i) {
    present.insert(status_of(results[i]));
    for (const auto& id : requirements_of(results[i])) cases[id].push_back(i);
  }
  std::vector<std::string> columns;
  for (auto st : k_statuses) {
    if (present.count(std::string(st))) columns.emplace_back(st);
  }
  // area -> requirement ids, areas in the canonical order, unknown areas after them.
  std::map<std::pair<std::size_t, std::string>, std::vector<std::string>> areas;
  for (const auto& [id, idx] : cases) {
    std::string area = requirement_area(run, id, results[idx.front()]);
    areas[{area_index(area), area}].push_back(id);
  }
  std::string out =
      "<section id=\"requirement-matrix\">\n<h2>Requirements</h2>\n"
      "<p>Each requirement id of the checklist that a selected case checks: the worst status among "
      "its cases, how many cases ended in each status, and the cases themselves (folded).</p>\n"
      "<p>What an id means (its text, strength, source, what a breach looks like and the cases that test it): "
      "<code>" + html_escape(explain_command(run)) + " ID</code></p>\n";
  if (areas.empty()) return out + "<p>No case in this run names a requirement.</p>\n</section>\n";
  out += "<table class=\"matrix-req\">\n<thead><tr><th>requirement</th><th>level</th>"
         "<th>summary and cases</th><th>worst</th>";
  for (const auto& c : columns) out += "<th>" + html_escape(c) + "</th>";
  out += "</tr></thead>\n";
  const std::size_t width = 4 + columns.size();
  for (auto& [key, ids] : areas) {
    std::sort(ids.begin(), ids.end(), requirement_less);
    out += fmt::format(FMT_STRING("<tbody><tr><th colspan=\"{}\" class=\"area\">{}</th></tr>\n"), width,
                       html_escape(area_label(key.second)));
    for (const auto& id : ids) {
      Tally t;
      for (auto i : cases[id]) t.add(status_of(results[i]));
      json req;
      if (run.contains("requirements") && run["requirements"].is_object() &&
          run["requirements"].contains(id)) {
        req = run["requirements"][id];
      }
      const std::string link = requirement_link(run, id);
      const std::string tip = " title=\"" + html_escape(explain_command(run) + " " + id) + "\"";
      out += fmt::format(FMT_STRING("<tr id=\"req-{0}\"><th scope=\"row\">{5}</th>"
                                    "<td>{1}</td><td>{2}{3}</td><td class=\"st-{4}\">{4}</td>"),
                         html_escape(id), html_escape(text(req, "level")), html_text_with_code(text(req, "summary")),
                         cases_details(run, shown, cases[id]), html_escape(t.worst),
                         link.empty() ? "<code" + tip + ">" + html_escape(id) + "</code>"
                                      : "<a href=\"" + html_escape(link) + "\"" + tip + "><code>" + html_escape(id) + "</code></a>");
      for (const auto& c : columns) {
        auto it = t.counts.find(c);
        out += it == t.counts.end() ? "<td class=\"n\"></td>"
                                    : fmt::format(FMT_STRING("<td class=\"n\">{}</td>"), it->second);
      }
      out += "</tr>\n";
    }
    out += "</tbody>\n";
  }
  return out + "</table>\n</section>\n";
}

// ---- dtype x layout support matrix -------------------------------------------------------

namespace {

// Layout and version columns in the order of the plugin ABI, then any others as seen.
const std::vector<std::string> k_layouts = {"contiguous", "fortran", "strided",
                                            "offset",     "reversed", "broadcast"};
const std::vector<std::string> k_versions = {"versioned", "legacy"};

void add_ordered(std::vector<std::string>& v, const std::string& s) {
  if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
}

std::vector<std::string> canonical_first(const std::vector<std::string>& canon,
                                         const std::vector<std::string>& seen) {
  std::vector<std::string> out;
  for (const auto& c : canon) {
    if (std::find(seen.begin(), seen.end(), c) != seen.end()) out.push_back(c);
  }
  for (const auto& s : seen) add_ordered(out, s);
  return out;
}

struct Grid {
  std::vector<std::string> dtypes, layouts, versions;
  std::map<std::tuple<std::string, std::string, std::string>, Tally> cells;
  int cases = 0, skips = 0;
  std::map<std::string, int> skip_reasons;  ///< message -> count
};

std::string grid_table(const Grid& g) {
  auto layouts = canonical_first(k_layouts, g.layouts);
  auto versions = canonical_first(k_versions, g.versions);
  std::string out = "<table class=\"matrix\">\n<thead><tr><th rowspan=\"2\">dtype</th>";
  for (const auto& l : layouts) {
    out += fmt::format(FMT_STRING("<th colspan=\"{}\">{}</th>"), versions.size(), html_escape(l));
  }
  out += "</tr>\n<tr>";
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    for (const auto& v : versions) out += "<th>" + html_escape(v) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& d : g.dtypes) {
    out += "<tr><th scope=\"row\"><code>" + html_escape(d) + "</code></th>";
    for (const auto& l : layouts) {
      for (const auto& v : versions) {
        auto it = g.cells.find({d, l, v});
        out += it == g.cells.end() ? Tally().cell() : it->second.cell();
      }
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace

std::string html_support_matrix(const json& run) {
  const json& results = array_at(run, "results");
  const json& subjects = array_at(run, "subjects");
  std::string out =
      "<section id=\"support-matrix\">\n<h2>dtype &times; layout support (producer cases)</h2>\n"
      "<p>Per subject and device: each cell is the worst status of the producer cases for that "
      "dtype, layout and DLPack version (— = not run).</p>\n";
  for (std::size_t s = 0; s < subjects.size(); ++s) {
    std::map<std::string, Grid> by_device;
    std::vector<std::string> devices;
    for (const auto& r : results) {
      if (subject_index(run, r) != static_cast<long long>(s) || text(r, "role") != "producer") continue;
      const json& p = member(r, "params");
      std::string dtype = text(p, "dtype"), layout = text(p, "layout");
      if (dtype.empty() || layout.empty()) continue;
      std::string version = text(p, "version").empty() ? "-" : text(p, "version");
      std::string device = text(p, "device");
      add_ordered(devices, device);
      Grid& g = by_device[device];
      add_ordered(g.dtypes, dtype);
      add_ordered(g.layouts, layout);
      add_ordered(g.versions, version);
      g.cells[{dtype, layout, version}].add(status_of(r));
      ++g.cases;
      if (status_of(r) == "skip") {
        ++g.skips;
        ++g.skip_reasons[one_line(text(r, "message"), 300)];
      }
    }
    std::string name = html_escape(subject_name(run, static_cast<long long>(s)));
    if (devices.empty()) {
      out += "<h3>" + name + "</h3>\n<p>No producer cases with dtype and layout parameters.</p>\n";
      continue;
    }
    for (const auto& d : devices) {
      out += "<h3>" + name + (d.empty() ? "" : " &mdash; device " + html_escape(d)) + "</h3>\n";
      const Grid& g = by_device[d];
      if (g.cases > 0 && g.skips == g.cases) {  // nothing ran: one line saying why, no table
        auto common = std::max_element(g.skip_reasons.begin(), g.skip_reasons.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
        out += fmt::format(FMT_STRING("<p class=\"allskip\">{} All {} producer cases skipped{}: {}</p>\n"),
                           status_badge("skip"), g.cases,
                           common->second == g.cases ? std::string()
                                                     : fmt::format(FMT_STRING("; most often ({} cases)"), common->second),
                           html_escape(common->first.empty() ? std::string("no reason given") : common->first));
        continue;
      }
      out += grid_table(g);
    }
  }
  if (subjects.empty()) out += "<p>No subjects.</p>\n";
  return out + "</section>\n";
}

// ---- producer x consumer pair matrix -----------------------------------------------------

std::string html_pair_matrix(const json& run) {
  const json& results = array_at(run, "results");
  std::map<std::pair<long long, long long>, Tally> cells;
  std::set<long long> producers, consumers;
  for (const auto& r : results) {
    if (text(r, "role") != "pair" || !r.contains("params")) continue;
    auto idx = [&](const char* k) {
      try {
        return std::stoll(text(r["params"], k));
      } catch (...) {
        return -1LL;
      }
    };
    long long p = idx("producer"), c = idx("consumer");
    producers.insert(p);
    consumers.insert(c);
    cells[{p, c}].add(status_of(r));
  }
  if (cells.empty()) return {};
  std::string out =
      "<section id=\"pair-matrix\">\n<h2>Producer &times; consumer pairs</h2>\n"
      "<p>Rows export, columns import; each cell is the worst status of the pair cases.</p>\n"
      "<table class=\"matrix\">\n<thead><tr><th>producer \\ consumer</th>";
  for (auto c : consumers) out += "<th>" + html_escape(subject_name(run, c)) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (auto p : producers) {
    out += "<tr><th scope=\"row\">" + html_escape(subject_name(run, p)) + "</th>";
    for (auto c : consumers) {
      auto it = cells.find({p, c});
      out += it == cells.end() ? Tally().cell() : it->second.cell();
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n</section>\n";
}

}  // namespace dlpv::reports::detail
