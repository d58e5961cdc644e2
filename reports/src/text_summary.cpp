// reports/src/text_summary.cpp: counts by status per subject, then every non-pass result
// with expected vs observed and its requirement ids, then the verdict line.
// SPDX-License-Identifier: Apache-2.0
#include "common.hpp"
#include "escape.hpp"
#include "dlpack_validate/reports.hpp"
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace dlpv::reports {

namespace {

/// A requirement's level as spec/requirements.md abbreviates it ("P SHOULD / C MUST"), spelled
/// out for a reader who has not read that table: "producer SHOULD / consumer MUST".
std::string spelled_level(const std::string& level) {
  std::string out;
  std::size_t start = 0;
  while (start <= level.size()) {
    std::size_t end = level.find(" / ", start);
    std::string part = level.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (part.rfind("P ", 0) == 0) part = "producer " + part.substr(2);
    else if (part.rfind("C ", 0) == 0) part = "consumer " + part.substr(2);
    out += (out.empty() ? "" : " / ") + part;
    if (end == std::string::npos) break;
    start = end + 3;
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
  return s;
}
std::string join(const nlohmann::ordered_json& arr, const char* sep) {
  std::string s;
  for (const auto& v : arr) s += (s.empty() ? "" : sep) + v.get<std::string>();
  return s;
}
// Library text may hold anything: keep the summary on one line per field, terminal-safe
// (terminal_text), cut at a character boundary.
std::string one_line(const std::string& text, size_t max = 400) {
  std::string s = terminal_text(text, true);
  if (s.size() > max) {
    size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s = s.substr(0, cut) + "...";
  }
  return s;
}

// ---- triage: unexpected results grouped by scope, requirement and shared cause ----------

// Where a result is listed: under the library it is charged to (verdict::charge_of), its own
// results first, then the pair results charged to it; pair results charged to neither side
// last. `owner` -1 sorts after every subject.
struct Scope {
  long long owner = -1, producer = -1, consumer = -1;
  bool pair = false;
  std::string side;
  bool operator<(const Scope& o) const {
    return std::make_tuple(owner < 0, owner, pair, producer, consumer, side) <
           std::make_tuple(o.owner < 0, o.owner, o.pair, o.producer, o.consumer, o.side);
  }
};

long long index_param(const nlohmann::ordered_json& r, const char* key) {
  try {
    return std::stoll(detail::text(detail::member(r, "params"), key));
  } catch (...) {
    return -1;
  }
}

Scope scope_of(const nlohmann::ordered_json& rec, const nlohmann::ordered_json& r) {
  const Charge charge = charge_of(rec, r);
  Scope s;
  s.owner = charge.subject;
  s.side = charge.side;
  if (detail::text(r, "role") == "pair") {
    const long long p = index_param(r, "producer"), c = index_param(r, "consumer");
    if (p >= 0 && c >= 0) {
      s.pair = true;
      s.producer = p;
      s.consumer = c;
      return s;
    }
  }
  if (s.owner < 0) s.owner = detail::subject_index(rec, r);
  s.side = "subject";
  return s;
}

// "pair numpy 2.4.6 -> torch 2.13.0+cpu" with who is charged.
std::string pair_heading(const nlohmann::ordered_json& rec, const Scope& s) {
  const std::string p = detail::subject_name(rec, s.producer), c = detail::subject_name(rec, s.consumer);
  if (s.owner < 0)
    return fmt::format("pair {} -> {}: {} -> {} (not charged to one side)", s.producer, s.consumer, p, c);
  return fmt::format("pair {} -> {}: {} -> {}, charged to {} (the {})", s.producer, s.consumer, p, c,
                     detail::subject_name(rec, s.owner), s.side);
}

// Case-specific detail masked, so results that differ only in it share a cause: digits
// become '#', hexadecimal after "0x" too, and text in parentheses becomes "(...)".
std::string cause_text(const std::string& m) {
  std::string out;
  int depth = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    const char c = m[i];
    if (c == '(') {
      if (depth++ == 0) out += "(...)";
      continue;
    }
    if (c == ')' && depth > 0) {
      --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == '0' && i + 1 < m.size() && (m[i + 1] == 'x' || m[i + 1] == 'X')) {
      out += '#';
      for (i += 2; i < m.size() && std::isxdigit(static_cast<unsigned char>(m[i])); ++i) {}
      --i;
    } else if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += c;
    }
  }
  return out;
}

// The requirement a result broke for triage: its first fail (then warn) check's; for a case
// that died or errored with no failing check, "" (nothing was judged: the death is the cause).
std::string triage_requirement(const nlohmann::ordered_json& r, const std::string& st) {
  for (const char* wanted : {"fail", "warn"})
    for (const auto& c : detail::array_at(r, "checks"))
      if (detail::text(c, "status") == wanted && !detail::text(c, "requirement").empty())
        return detail::text(c, "requirement");
  if (st == "crash" || st == "timeout" || st == "error") return "";
  return detail::failing_requirement(r);
}

struct Cause {
  std::string status, key;
  std::vector<const nlohmann::ordered_json*> results;
};
struct ReqGroup {
  std::string id;
  std::vector<Cause> causes;
  std::size_t count = 0;
  int worst = 0;
};

// Dotted prefix all ids share ("producer.deleter.frees"), "" when none.
std::string common_prefix(const std::vector<const nlohmann::ordered_json*>& rs) {
  std::string p = detail::text(*rs.front(), "id");
  for (const auto* r : rs) {
    const std::string id = detail::text(*r, "id");
    std::size_t n = 0;
    while (n < p.size() && n < id.size() && p[n] == id[n]) ++n;
    p.resize(n);
  }
  const auto dot = p.rfind('.');
  if (rs.size() < 2 || dot == std::string::npos) return "";
  return p.substr(0, dot);
}

void cause_lines(const nlohmann::ordered_json& rec, const Cause& c, bool dead, std::string& out) {
  const auto& rep = *c.results.front();
  const std::size_t n = c.results.size();
  std::set<std::string> messages, expected, observed;
  std::vector<std::string> cited;  // for deaths: the requirements the cases would have judged
  for (const auto* r : c.results) {
    messages.insert(detail::text(*r, "message"));
    expected.insert(detail::text(*r, "expected"));
    observed.insert(detail::text(*r, "observed"));
    if (dead)
      for (const auto& id : detail::requirements_of(*r))
        if (std::find(cited.begin(), cited.end(), id) == cited.end()) cited.push_back(id);
  }
  std::string msg = detail::text(rep, "message");
  if (msg.empty() && c.status == "xpass") msg = "passed, but the baseline expects it to fail";
  // A death says who died: the library under test (the validator went on) or the validator.
  const std::string death = detail::death_statement(rec, rep);
  if (!death.empty()) msg = death;
  out += fmt::format("    {:<7} x {:<3} {}\n", upper(c.status), n, one_line(msg.empty() ? "(no message)" : msg));
  if (messages.size() > 1)
    out += fmt::format("                ({} distinct messages, differing only in parentheses or numbers; above: {})\n",
                       messages.size(), detail::text(rep, "id"));
  for (const auto& [key, all] : {std::pair{"expected", &expected}, std::pair{"observed", &observed}}) {
    const std::string v = detail::text(rep, key);
    if (v.empty()) continue;
    out += fmt::format("                {}: {}{}\n", key, one_line(v, 200),
                       all->size() > 1 ? fmt::format("  [{} values; this one from {}]", all->size(), detail::text(rep, "id"))
                                       : std::string());
  }
  if (detail::member(rep, "signal").is_string() && c.status != "crash")
    out += "                signal: " + detail::text(rep, "signal") + ", phase: " + detail::text(rep, "phase") + "\n";
  if (dead && !cited.empty()) {
    std::string list;
    for (std::size_t i = 0; i < cited.size(); ++i) list += (i ? " " : "") + cited[i];
    out += "                cites: " + list + "\n";
  }
  if (c.status == "xpass") {
    const auto& bl = detail::member(rep, "baseline");
    out += fmt::format("                baseline: expects {} for {} ({})\n", detail::text(bl, "expect"),
                       detail::text(bl, "case"), one_line(detail::text(bl, "reason"), 200));
  }
  // The ids: all of them when few, else a count and examples (every id is in --json).
  constexpr std::size_t k_all = 6, k_examples = 4;
  const std::string prefix = common_prefix(c.results);
  std::string ids;
  const std::size_t shown = n <= k_all ? n : k_examples;
  for (std::size_t i = 0; i < shown; ++i) ids += (i ? ", " : "") + detail::text(*c.results[i], "id");
  if (n > shown) ids += fmt::format(", ... ({} more)", n - shown);
  out += fmt::format("                {}: {}\n",
                     n == 1 ? std::string("case")
                            : prefix.empty() ? fmt::format("{} cases", n) : fmt::format("{} cases, all {}.*", n, prefix),
                     ids);
}

void triage(const nlohmann::ordered_json& rec, std::string& out) {
  std::map<Scope, std::vector<ReqGroup>> scopes;
  std::size_t total = 0;
  for (const auto& r : detail::array_at(rec, "results")) {
    const std::string st = detail::status_of(r);
    if (st == "pass" || st == "skip" || st == "xfail") continue;
    ++total;
    auto& groups = scopes[scope_of(rec, r)];
    const std::string req = triage_requirement(r, st);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const ReqGroup& x) { return x.id == req; });
    if (g == groups.end()) g = groups.insert(groups.end(), ReqGroup{req, {}, 0, 0});
    std::string key = cause_text(detail::text(r, "message"));
    if (st == "crash" || st == "timeout" || st == "error") key += "\n" + detail::text(r, "signal") + "\n" + detail::text(r, "phase");
    if (st == "xpass") key += "\n" + detail::member(r, "baseline").dump();
    auto c = std::find_if(g->causes.begin(), g->causes.end(), [&](const Cause& x) { return x.status == st && x.key == key; });
    if (c == g->causes.end()) c = g->causes.insert(g->causes.end(), Cause{st, key, {}});
    c->results.push_back(&r);
    ++g->count;
    g->worst = std::max(g->worst, detail::severity_rank(st));
  }
  if (total == 0) return;
  const bool many = detail::array_at(rec, "subjects").size() > 1 || scopes.size() > 1;
  std::size_t nreq = 0, ncause = 0;
  for (const auto& [scope, groups] : scopes) {
    nreq += groups.size();
    for (const auto& g : groups) ncause += g.causes.size();
  }
  out += fmt::format("\nresults other than pass: {} result{}, {} group{} by requirement, {} by cause{}\n", total,
                     total == 1 ? "" : "s", nreq, nreq == 1 ? "" : "s", ncause,
                     many ? " (by the library charged: its own cases, then the pairs where it broke the rule; "
                            "pairs charged to neither side last)"
                          : "");
  const std::string doc = detail::text(detail::member(rec, "tool"), "requirements_doc");
  if (!doc.empty()) out += "(each requirement id's full entry: " + doc + "#<id in lower case>)\n";
  for (auto& [scope, groups] : scopes) {
    if (many) {
      if (scope.pair)
        out += "\n " + pair_heading(rec, scope) + "\n";
      else
        out += fmt::format("\n subject {}: {}\n", scope.owner, detail::subject_name(rec, scope.owner));
    }
    // Worst first (a library that dies before its checks leads), then the larger groups.
    std::stable_sort(groups.begin(), groups.end(), [](const ReqGroup& a, const ReqGroup& b) {
      return a.worst != b.worst ? a.worst > b.worst : a.count > b.count;
    });
    for (const auto& g : groups) {
      if (g.id.empty()) {
        out += fmt::format("\n  (no check judged: the case{} did not finish)  {} result{}\n", g.count == 1 ? "" : "s", g.count,
                           g.count == 1 ? "" : "s");
      } else {
        const auto& req = detail::member(detail::member(rec, "requirements"), g.id.c_str());
        const std::string level = spelled_level(detail::text(req, "level")),
                          summary = detail::plain_text(detail::requirement_summary(rec, g.id));
        out += fmt::format("\n  {}{}{}  {} result{}\n", g.id, level.empty() ? "" : " [" + level + "]",
                           summary.empty() ? "" : " " + one_line(summary, 160), g.count, g.count == 1 ? "" : "s");
      }
      for (const auto& c : g.causes) cause_lines(rec, c, g.id.empty(), out);
    }
  }
}
}  // namespace

std::string reason_kind(const std::string& message) {
  // Parentheses and what they hold are case detail: "(3, 4)", "(DLPV_UNSUPPORTED)".
  std::string flat;
  int depth = 0;
  for (char c : message) {
    if (c == '(') {
      if (depth++ == 0) flat += "(...)";
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      flat += c;
    }
  }
  // What follows the first ": " is usually the library's own words (an exception and its
  // text): dropped, unless it is short and reads as ours.
  if (const auto colon = flat.find(": "); colon != std::string::npos) {
    const std::string tail = flat.substr(colon + 2);
    const bool library_words = tail.size() > 80 || tail.find("Error") != std::string::npos ||
                               tail.find("Exception") != std::string::npos || tail.find("error") != std::string::npos;
    if (library_words) flat.resize(colon);
  }
  static const std::set<std::string> layouts = {"contiguous", "fortran", "strided", "offset", "reversed", "broadcast"};
  auto starts = [](const std::string& w, const char* p) { return w.rfind(p, 0) == 0; };
  std::string out, word;
  auto flush = [&] {
    if (word.empty()) return;
    std::string core = word;
    while (!core.empty() && (core.back() == ',' || core.back() == '.' || core.back() == ';')) core.pop_back();
    const std::string tail = word.substr(core.size());
    const bool digits = core.find_first_of("0123456789") != std::string::npos;
    if (core == "legacy" || core == "versioned") out += "<kind>" + tail;
    else if (layouts.count(core)) out += "<layout>" + tail;
    else if (core == "bool" || ((starts(core, "float") || starts(core, "bfloat") || starts(core, "int") ||
                                 starts(core, "uint") || starts(core, "complex") || starts(core, "bcomplex")) && digits))
      out += "<dtype>" + tail;
    else if (digits) out += "#" + tail;
    else out += word;
    word.clear();
  };
  for (char c : flat) {
    if (c == ' ') {
      flush();
      out += ' ';
    } else {
      word += c;
    }
  }
  flush();
  return out;
}

std::string terminal_text(std::string_view s, bool one_line) { return detail::terminal_text(s, one_line); }

namespace {

using Record = nlohmann::ordered_json;

/// The run's first lines: the tool, the run's size and settings, warnings.
void head_lines(const Record& rec, std::string& out) {
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
}

/// Counts per library: its own results and the pair results charged to it; pair results
/// charged to neither side are counted once, on the "pairs" line.
void library_lines(const Record& rec, std::string& out) {
  const auto& subjects = rec["subjects"];
  const auto& results = rec["results"];
  std::map<long long, std::map<std::string, int>> charged_counts, pair_findings;
  std::map<std::string, int> unowned_pairs;
  std::size_t npairs = 0;
  for (const auto& r : results) {
    const Charge charge = charge_of(rec, r);
    const std::string st = detail::status_of(r);
    const bool pair = detail::text(r, "role") == "pair";
    npairs += pair;
    if (charge.subject >= 0) {
      charged_counts[charge.subject][st]++;
      if (pair) pair_findings[charge.subject][fmt::format("{} as {}", st, charge.side)]++;
    } else if (pair) {
      unowned_pairs[st]++;
    } else {
      charged_counts[detail::subject_index(rec, r)][st]++;
    }
  }
  for (const auto& s : subjects) {
    const int idx = s.value("index", 0);
    auto& counts = charged_counts[idx];
    const std::string version = s.value("dlpack_version", "?");
    // What it speaks, as the record words it (records from before 'speaks' say it from the
    // version and legacy_only).
    const std::string speaks =
        s.contains("speaks") && s["speaks"].is_string()
            ? s["speaks"].get<std::string>()
            : (version == "not probed" ? "DLPack versions not probed: no device here to make an array on"
                                       : "DLPack " + version + (s.value("legacy_only", false) ? ", legacy-only" : ""));
    out += fmt::format("\nsubject {}: {}  [{}]\n  {}\n", idx, s.value("name", "?"), one_line(speaks),
                       s.value("path", ""));
    for (const auto& n : s["notes"]) out += "  note: " + one_line(n.get<std::string>()) + "\n";
    out += "  implements: " + join(s["capabilities"], " ") + "\n  ";
    for (const char* st : {"pass", "fail", "warn", "skip", "xfail", "xpass", "crash", "timeout", "error"})
      if (counts[st]) out += fmt::format("{} {}  ", st, counts[st]);
    out += "\n";
    if (!pair_findings[idx].empty()) {
      std::string list;
      for (const auto& [what, n] : pair_findings[idx]) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", what, n);
      out += "  of these, in pair cases (charged here by the phase or check that broke): " + list + "\n";
    }
  }
  if (npairs > 0) {
    std::size_t unowned = 0;
    for (const auto& [st, n] : unowned_pairs) unowned += static_cast<std::size_t>(n);
    out += fmt::format("\npairs: {} results, {} charged to one library above; the rest:\n  ", npairs, npairs - unowned);
    for (const char* st : {"pass", "fail", "warn", "skip", "xfail", "xpass", "crash", "timeout", "error"})
      if (unowned_pairs[st]) out += fmt::format("{} {}  ", st, unowned_pairs[st]);
    out += "\n";
  }
}

/// The next steps, incidents (deaths and protocol breaks with no case in flight, a library's
/// writes into the event pipe) grouped by message, and the cases never run.
void step_and_incident_lines(const Record& rec, std::string& out) {
  const auto steps = detail::next_steps(rec);
  if (!steps.empty()) out += "\nnext steps:\n";
  for (const auto& step : steps) out += "  - " + step + "\n";
  // Incidents (deaths and protocol breaks with no case in flight, a library's writes into the
  // event pipe), grouped by message; cases never run.
  const auto incidents = detail::incident_groups(rec);
  if (!incidents.empty()) out += "\nincidents (outside every case's verdict: a worker lost with no case in flight, whose next case was "
           "run again, or the library writing into the event pipe):\n";
  for (const auto& g : incidents) {
    out += fmt::format("  INCIDENT {:>4} x {}\n", g.count, one_line(g.message));
    if (!g.next_case.empty()) out += "               first before " + g.next_case + "\n";
  }
  for (const auto& n : detail::not_run_lines(rec)) {
    out += fmt::format("\nNOT RUN {} case{}: {}\n", n.count, n.count == 1 ? "" : "s", one_line(n.reason));
    if (!n.sample.empty()) out += "               e.g. " + n.sample + "\n";
  }
}

/// Skips and expected failures: one line per kind of reason, with the libraries it came from
/// and one full example; every distinct reason when verbose.
void skip_lines(const Record& rec, bool verbose, std::string& out) {
  const auto& results = rec["results"];
  std::map<std::pair<std::string, std::string>, std::vector<const nlohmann::ordered_json*>> groups;
  for (const auto& r : results) {
    const std::string st = r.value("status", "error");
    if (st != "skip" && st != "xfail") continue;
    const std::string msg = detail::reason_line(rec, r);
    const std::string kind = st == "xfail" ? msg : reason_kind(msg);  // a baseline's reason is the kind
    groups[{st, verbose ? msg : kind}].push_back(&r);
  }
  if (!groups.empty())
    out += verbose ? "\nskipped and expected failures, by reason:\n"
                   : "\nskipped and expected failures, by kind of reason (-v lists every reason):\n";
  for (const auto& [key, rs] : groups) {
    out += fmt::format("  {:<7} {:>4} x {}\n", upper(key.first), rs.size(), one_line(key.second, 200));
    // The kind stands for its reasons with placeholders (<dtype>, <layout>, #): one of them in
    // full beside it, so that the reader sees a real sentence.
    if (!verbose) {
      const std::string first = detail::reason_line(rec, *rs.front());
      if (first != key.second) out += "               e.g. " + one_line(first, 200) + "\n";
    }
    if (verbose) {
      std::string sample;
      for (size_t i = 0; i < rs.size() && i < 3; ++i) sample += (i ? ", " : "") + detail::text(*rs[i], "id");
      out += "               e.g. " + sample + (rs.size() > 3 ? ", ..." : "") + "\n";
    }
  }
  if (!groups.empty() && !verbose) {
    // Where they came from, in one line per library: a maintainer looks for their own.
    std::map<std::string, std::size_t> by_library;
    for (const auto& [key, rs] : groups)
      for (const auto* r : rs)
        by_library[detail::text(*r, "role") == "pair" ? std::string("pair cases") : detail::subject_name(rec, *r)]++;
    std::string list;
    for (const auto& [who, n] : by_library) list += fmt::format("{}{} {}", list.empty() ? "" : ", ", who, n);
    out += "               from: " + one_line(list, 400) + "\n";
  }
}

/// Baseline entries that matched no result (the known problem is gone, or the entry is
/// mistyped), and entries about libraries this run did not load (listed so that a mistyped
/// library name in a `when` is seen, never counted).
void baseline_lines(const Record& rec, std::string& out) {
  const auto& stale = detail::array_at(detail::member(rec, "baseline_report"), "stale");
  if (!stale.empty())
    out += fmt::format("\nstale baseline entries ({}; they matched no result{}):\n", stale.size(),
                       detail::is_strict(rec) ? ", unexpected under --strict" : ", unexpected only under --strict");
  for (const auto& e : stale) {
    std::string when;
    for (const auto& [k, v] : detail::member(e, "when").items()) when += fmt::format(" {}={}", k, detail::text_of(v));
    out += fmt::format("  STALE   {} expect {}{}: {}\n", detail::text(e, "case"), detail::text(e, "expect"), when,
                       one_line(detail::text(e, "reason"), 200));
  }
  // Entries about libraries this run did not load: listed so that a mistyped library name in a
  // `when` is seen, never counted.
  const auto& elsewhere = detail::array_at(detail::member(rec, "baseline_report"), "not_applicable");
  if (!elsewhere.empty()) {
    std::string names;
    for (size_t i = 0; i < elsewhere.size() && i < 3; ++i) {
      std::string when;
      for (const auto& [k, v] : detail::member(elsewhere[i], "when").items())
        when += fmt::format("{}{}={}", when.empty() ? "" : " ", k, detail::text_of(v));
      names += fmt::format("{}{} [{}]", i ? ", " : "", detail::text(elsewhere[i], "case"), when);
    }
    out += fmt::format("\nbaseline entries about libraries this run did not load ({}, not applicable): {}{}\n",
                       elsewhere.size(), one_line(names, 300), elsewhere.size() > 3 ? ", ..." : "");
  }
}

/// How to read an id in full (where results other than pass were listed), then the verdict.
void verdict_lines(const Record& rec, std::string& out) {
  const auto& listed = detail::array_at(rec, "results");
  if (std::any_of(listed.begin(), listed.end(), [](const nlohmann::ordered_json& r) {
        const std::string st = detail::status_of(r);
        return st != "pass" && st != "skip" && st != "xfail";
      }))
    out += "\nexplain a requirement or a case: " + detail::explain_command(rec) + " ID\n";
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
}

}  // namespace

std::string text_summary(const nlohmann::ordered_json& rec, bool verbose) {
  std::string out;
  head_lines(rec, out);
  library_lines(rec, out);
  triage(rec, out);
  step_and_incident_lines(rec, out);
  skip_lines(rec, verbose, out);
  baseline_lines(rec, out);
  verdict_lines(rec, out);
  // Every line already holds library text through one_line; the whole is made terminal-safe
  // once more for what reaches it otherwise (names, paths, ids): an idempotent pass.
  return terminal_text(out, false);
}

}  // namespace dlpv::reports
