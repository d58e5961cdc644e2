// SPDX-License-Identifier: Apache-2.0
// markdown.cpp: GitHub-flavoured Markdown for CI step summaries (style reference B3).
//
// GitHub drops a step summary above 1 MiB entirely, so the output is built against a hard
// byte budget: sections are emitted in priority order (verdict, counts, unexpected results,
// then folded details) and once a row no longer fits, the rest are only counted.
#include <ostream>
#include <vector>

#include <fmt/format.h>

#include "bench_parts.hpp"
#include "common.hpp"
#include "dlpack_validate/reports.hpp"
#include "escape.hpp"

namespace dlpv::reports {

using detail::json;

namespace {

constexpr std::size_t k_reason_limit = 200;
// Space kept free for a section's closing lines and the final "… and N more" note.
constexpr std::size_t k_reserve = 160;

class BoundedText {
 public:
  explicit BoundedText(std::size_t limit) : limit_(limit) {}

  // Appends chunk if it fits with `reserve` bytes to spare; otherwise marks the text full.
  bool add(const std::string& chunk, std::size_t reserve = k_reserve) {
    if (full_ || text_.size() + chunk.size() + reserve > limit_) {
      full_ = true;
      return false;
    }
    text_ += chunk;
    return true;
  }
  // Appends unconditionally: only for the small closing lines covered by the reserve.
  void force(const std::string& chunk) { text_ += chunk; }
  std::size_t omitted = 0;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::size_t limit_;
  bool full_ = false;
};

struct Section {
  std::string title;      // "" for the open (unfolded) unexpected table
  std::string header;     // table header lines
  std::vector<std::string> rows;
  std::string empty_note; // shown instead of a table when there are no rows
};

std::string reqs_cell(const json& run, const json& r) {
  std::string out;
  for (const auto& id : detail::requirements_of(r)) {
    const std::string link = detail::requirement_link(run, id);
    out += (out.empty() ? "" : " ") + (link.empty() ? detail::md_code(id) : "[" + detail::md_code(id) + "](" + link + ")");
  }
  return out;
}

// What was seen, first: the observation (with the expectation after it) where the result
// has one, else the reason (a crash's signal and phase, a skip's or a baseline's reason).
std::string what_happened(const json& run, const json& r) {
  const std::string st = detail::status_of(r);
  const std::string observed = detail::text(r, "observed"), expected = detail::text(r, "expected");
  if (observed.empty() || st == "skip" || st == "xfail" || st == "xpass" || st == "crash" || st == "timeout")
    return detail::one_line(detail::reason_line(run, r), k_reason_limit);
  std::string message = detail::text(r, "message");
  if (!message.empty() && message[0] == '[' && message.find("] ") != std::string::npos && message.find("] ") < 40)
    message = message.substr(message.find("] ") + 2);  // the requirement column already names it
  return detail::one_line("observed " + observed + (expected.empty() ? "" : " (expected " + expected + ")") +
                              (message.empty() ? "" : " — " + message),
                          k_reason_limit);
}

std::string result_row(const json& run, const json& r, bool with_status) {
  std::string row = "| " + detail::md_code(detail::text(r, "id")) + " | " +
                    detail::md_text(detail::subject_label(run, r)) + " | " + reqs_cell(run, r) + " | ";
  if (with_status) row += "**" + detail::status_of(r) + "** | ";
  return row + detail::md_text(what_happened(run, r)) + " |\n";
}

void emit(BoundedText& out, const Section& s) {
  bool folded = !s.title.empty();
  std::string open = folded ? fmt::format(FMT_STRING("<details><summary>{} ({})</summary>\n\n"),
                                          detail::md_text(s.title), s.rows.size())
                            : std::string();
  if (s.rows.empty()) {
    if (!folded && !s.empty_note.empty()) out.add(s.empty_note + "\n\n");
    return;
  }
  if (!out.add(open + s.header)) {
    out.omitted += s.rows.size();
    return;
  }
  std::size_t shown = 0;
  for (const auto& row : s.rows) {
    if (!out.add(row)) break;
    ++shown;
  }
  out.omitted += s.rows.size() - shown;
  out.force(folded ? "\n</details>\n\n" : "\n");
}

std::string verdict_line(const json& run) {
  const json& sum = detail::member(run, "summary");
  bool pass = detail::text(sum, "verdict") == "pass";
  std::string line = fmt::format(FMT_STRING("## {} dlpack-validate: {}"), pass ? "✅" : "❌",
                                 pass ? "PASS" : "FAIL");
  line += fmt::format(FMT_STRING(" ({} unexpected of {} cases"), detail::text(sum, "unexpected"),
                      detail::text(sum, "total"));
  if (detail::is_strict(run)) line += ", strict";
  line += ")";
  if (run.contains("complete") && run["complete"].is_boolean() && !run["complete"].get<bool>()) {
    line += " — **incomplete run**";
  }
  return line + "\n\n";
}

std::string counts_table(const json& run) {
  const json& counts = detail::member(detail::member(run, "summary"), "counts");
  std::string head = "|", rule = "|", row = "|";
  for (auto s : detail::k_statuses) {
    std::string n = detail::text(counts, std::string(s).c_str());
    head += fmt::format(FMT_STRING(" {} |"), s);
    rule += " ---: |";
    row += fmt::format(FMT_STRING(" {} |"), n.empty() ? "0" : n);
  }
  return head + "\n" + rule + "\n" + row + "\n\n";
}

std::string context_lines(const json& run) {
  std::string s = "Subjects:";
  if (run.contains("subjects") && run["subjects"].is_array()) {
    bool first = true;
    for (const auto& subj : run["subjects"]) {
      s += first ? " " : "; ";
      first = false;
      std::string name = detail::text(subj, "name");
      if (name.empty()) name = detail::text(subj, "path");
      s += detail::md_code(name);
      std::string v = detail::text(subj, "dlpack_version");
      if (!v.empty()) s += " (DLPack " + detail::md_text(v) + ")";
      std::string legacy = detail::legacy_note(subj);
      if (!legacy.empty()) s += ", " + detail::md_text(legacy);
    }
  }
  s += "\n";
  std::string warning = detail::text(detail::member(run, "options"), "warning");
  if (!warning.empty()) s += "\n**Warning:** " + detail::md_text(warning) + "\n";
  if (run.contains("baseline_report") && run["baseline_report"].is_object()) {
    const json& br = run["baseline_report"];
    std::size_t stale = br.contains("stale") && br["stale"].is_array() ? br["stale"].size() : 0;
    std::size_t xpass = br.contains("xpass") && br["xpass"].is_array() ? br["xpass"].size() : 0;
    s += fmt::format(FMT_STRING("\nBaseline {} (sha256 `{}`): {} unexpected pass(es), {} stale "
                                "entr{}.\n"),
                     detail::md_code(detail::text(br, "path")),
                     detail::utf8_prefix(detail::text(br, "sha256"), 12), xpass, stale,
                     stale == 1 ? "y" : "ies");
  }
  return s + "\n";
}

// Under --strict stale entries fail the run, so they are shown open, not folded.
Section stale_section(const json& run) {
  const std::string table = "| case | expect | reason |\n| --- | --- | --- |\n";
  Section s = detail::is_strict(run)
                  ? Section{"", "### Stale baseline entries (unexpected under --strict)\n\n" + table, {}, ""}
                  : Section{"Stale baseline entries", table, {}, ""};
  if (run.contains("baseline_report") && run["baseline_report"].is_object() &&
      run["baseline_report"].contains("stale") && run["baseline_report"]["stale"].is_array()) {
    for (const auto& e : run["baseline_report"]["stale"]) {
      s.rows.push_back("| " + detail::md_code(detail::text(e, "case")) + " | " +
                       detail::md_text(detail::text(e, "expect")) + " | " +
                       detail::md_text(detail::one_line(detail::text(e, "reason"), k_reason_limit)) +
                       " |\n");
    }
  }
  return s;
}

// The bench table (open): measured routes; regressions first; the rest folded below.
std::vector<Section> bench_sections(const json& run) {
  const json& b = detail::bench_of(run);
  if (!b.is_object()) return {};
  std::string head = "### Exchange overhead (ns/op)\n\n" + detail::md_text(detail::bench_calibration_line(run)) +
                     ". Median [p10 .. p90] of the per-batch figures; net = raw - harness overhead.\n\n";
  if (!detail::text(b, "error").empty())
    head += "**The bench did not finish:** " + detail::md_text(detail::one_line(detail::text(b, "error"), k_reason_limit)) + "\n\n";
  for (const auto& line : detail::bench_warning_lines(run))
    head += "- **Regression:** " + detail::md_text(detail::one_line(line, k_reason_limit)) + "\n";
  if (detail::bench_warnings(run) > 0) head += "\n";
  Section measured{"", head + "| route | subjects | net median | net p10 .. p90 | raw median | ops x batches | vs baseline |\n"
                              "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n", {}, ""};
  Section other{"Routes not measured", "| route | subjects | status | reason |\n| --- | --- | --- | --- |\n", {}, ""};
  for (const auto& r : detail::bench_rows(run)) {
    if (r.status == "ok") {
      measured.rows.push_back("| " + detail::md_code(r.route) + " | " + detail::md_text(r.subjects) + " | " +
                              r.net_median + " | " + r.net_p10 + " .. " + r.net_p90 + " | " + r.raw_median + " | " +
                              r.iterations + " x " + r.batches + " | " +
                              (r.ratio.empty() ? "" : detail::md_text(r.ratio) + (r.regression ? " **regression**" : "")) +
                              " |\n");
    } else {
      other.rows.push_back("| " + detail::md_code(r.route) + " | " + detail::md_text(r.subjects) + " | " +
                           (r.status == "error" ? "**error**" : detail::md_text(r.status)) + " | " +
                           detail::md_text(detail::one_line(r.reason, k_reason_limit)) + " |\n");
    }
  }
  if (measured.rows.empty()) measured.header = head, measured.empty_note = "No route was measured.";
  return {measured, other};
}

}  // namespace

void write_markdown(const json& record, std::ostream& out, std::size_t budget_bytes) {
  json storage;
  const json& run = detail::with_summary(record, storage);
  const bool strict = detail::is_strict(run);
  const std::string cols = "| case | subject | requirements | what happened |\n| --- | --- | --- | --- |\n";
  Section unexpected{"", "### Unexpected results\n\n| case | subject | requirements | status | what happened |\n"
                         "| --- | --- | --- | --- | --- |\n", {}, "No unexpected results."};
  Section warnings{"Warnings (SHOULD not met)", cols, {}, ""};
  Section skips{"Skipped", cols, {}, ""};
  Section xfails{"Expected failures (baseline)", cols, {}, ""};
  Section xpasses{"Unexpected passes (baseline entry no longer needed)", cols, {}, ""};
  Section others{"Other results", "| case | subject | requirements | status | what happened |\n"
                                  "| --- | --- | --- | --- | --- |\n", {}, ""};
  if (run.contains("results") && run["results"].is_array()) {
    for (const auto& r : run["results"]) {
      std::string st = detail::status_of(r);
      if (detail::is_unexpected(st, strict)) {
        unexpected.rows.push_back(result_row(run, r, true));
      } else if (st == "warn") {
        warnings.rows.push_back(result_row(run, r, false));
      } else if (st == "skip") {
        skips.rows.push_back(result_row(run, r, false));
      } else if (st == "xfail") {
        xfails.rows.push_back(result_row(run, r, false));
      } else if (st == "xpass") {
        xpasses.rows.push_back(result_row(run, r, false));
      } else {
        others.rows.push_back(result_row(run, r, true));
      }
    }
  }
  Section supervision{"", "### Worker incidents and cases not run\n\n| what | count | detail |\n| --- | --- | --- |\n",
                      {}, ""};
  for (const auto& g : detail::incident_groups(run))
    supervision.rows.push_back("| incident (" + detail::md_text(g.kind) + ") | " +
                               std::to_string(g.count) + " | " + detail::md_text(detail::one_line(g.message, 300)) + " |\n");
  for (const auto& n : detail::not_run_lines(run))
    supervision.rows.push_back("| not run | " + std::to_string(n.count) + " | " +
                               detail::md_text(detail::one_line(n.reason, 300)) +
                               (n.sample.empty() ? "" : " (e.g. " + detail::md_text(n.sample) + ")") + " |\n");
  BoundedText text(budget_bytes);
  text.force(verdict_line(run));
  text.add(counts_table(run), 0);
  text.add(context_lines(run));
  emit(text, unexpected);
  const auto steps = detail::next_steps(run);
  const std::string explain = "explain a requirement or a case: " + detail::md_code(detail::explain_command(run) + " ID");
  if (!steps.empty()) {
    std::string block = "**Next steps**\n\n";
    for (const auto& step : steps) block += "- " + detail::md_text(step) + "\n";
    text.add(block + "- " + explain + "\n\n");
  } else if (!warnings.rows.empty() || !xpasses.rows.empty()) {
    text.add(explain + "\n\n");
  }
  if (!supervision.rows.empty()) emit(text, supervision);
  for (const Section& s : bench_sections(run)) emit(text, s);
  emit(text, stale_section(run));
  emit(text, xpasses);
  emit(text, warnings);
  emit(text, skips);
  emit(text, xfails);
  emit(text, others);
  if (text.omitted > 0) {
    text.force(fmt::format(FMT_STRING("… and {} more, see the HTML/JSON report.\n"), text.omitted));
  }
  // The reserve covers every forced line; only a budget smaller than the verdict line itself
  // needs this final cut.
  out << detail::utf8_prefix(text.text(), budget_bytes);
}

}  // namespace dlpv::reports
