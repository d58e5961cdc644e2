// SPDX-License-Identifier: Apache-2.0
// baseline.cpp: expected-failure files (docs/design.md §6): parse, match, report stale entries and
// unexpected passes, and write a fresh baseline from a run.
//
// Matching is deliberately exact on status: an entry expecting "fail" does not waive a
// crash, because a library that starts crashing where it used to return wrong data has
// regressed, and the gate should say so.
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "dlpack_validate/record_access.hpp"
#include "dlpack_validate/verdict.hpp"
#include "io.hpp"
#include "sha256.hpp"

namespace dlpv::verdict {

using access::json;
namespace a = access;

namespace {

constexpr std::string_view k_expectable[] = {"fail", "warn", "crash", "timeout", "error", "skip", "unexpected"};

/// Whether observed status `st` is what `expect` waives: the same status, or for "unexpected"
/// (an --xfails-file line) any of fail, warn, crash, timeout, error.
bool waived(const std::string& st, const std::string& expect) {
  if (st == "skip") return false;
  if (expect == "unexpected") return st == "fail" || st == "warn" || st == "crash" || st == "timeout" || st == "error";
  return st == expect;
}
constexpr const char* k_written_reason = "recorded by --write-baseline";

[[noreturn]] void bad_entry(const std::string& path, std::size_t n, const std::string& why) {
  throw BadInput(fmt::format(FMT_STRING("baseline '{}': entry {}: {}"), path, n, why));
}

std::string required_string(const json& e, const char* key, const std::string& path,
                            std::size_t n) {
  auto it = e.find(key);
  if (it == e.end() || !it->is_string() || it->get<std::string>().empty()) {
    bad_entry(path, n, fmt::format(FMT_STRING("\"{}\" must be a non-empty string"), key));
  }
  return it->get<std::string>();
}

BaselineEntry parse_entry(const json& e, const std::string& path, std::size_t n) {
  if (!e.is_object()) bad_entry(path, n, "not an object");
  for (const auto& item : e.items()) {
    const std::string& k = item.key();
    if (k != "case" && k != "expect" && k != "reason" && k != "issue" && k != "when" &&
        k != "comment" && k != "confirmed_by" && k != "strict" && k != "intermittent") {
      bad_entry(path, n, fmt::format(FMT_STRING("unknown key \"{}\""), k));
    }
  }
  BaselineEntry b;
  b.case_glob = required_string(e, "case", path, n);
  b.expect = required_string(e, "expect", path, n);
  bool known = false;
  for (auto s : k_expectable) known |= b.expect == s;
  if (!known) {
    bad_entry(path, n, fmt::format(FMT_STRING("\"expect\" is \"{}\", not one of fail, warn, "
                                              "crash, timeout, error, skip, unexpected"),
                                   b.expect));
  }
  b.reason = required_string(e, "reason", path, n);
  if (e.contains("issue") && !e["issue"].is_null()) b.issue = required_string(e, "issue", path, n);
  if (e.contains("confirmed_by")) b.confirmed_by = required_string(e, "confirmed_by", path, n);
  if (e.contains("strict")) {
    if (!e["strict"].is_boolean()) bad_entry(path, n, "\"strict\" must be true or false");
    b.strict = e["strict"].get<bool>();
  }
  if (e.contains("intermittent")) {
    if (!e["intermittent"].is_boolean()) bad_entry(path, n, "\"intermittent\" must be true or false");
    b.intermittent = e["intermittent"].get<bool>();
  }
  if (b.strict && b.intermittent)
    bad_entry(path, n, "\"strict\": true (a pass fails the run) and \"intermittent\": true (a pass is no news) "
                       "contradict each other");
  if (e.contains("when")) {
    const json& w = e["when"];
    if (!w.is_object()) bad_entry(path, n, "\"when\" must be an object");
    for (const auto& item : w.items()) {
      const std::string& k = item.key();
      if (k != "subject" && k != "dlpack_version" && k != "producer" && k != "consumer") {
        bad_entry(path, n, fmt::format(FMT_STRING("unknown key \"when.{}\""), k));
      }
      if (!item.value().is_string()) {
        bad_entry(path, n, fmt::format(FMT_STRING("\"when.{}\" must be a string"), k));
      }
    }
    if (w.contains("subject")) b.has_subject = true, b.subject_glob = w["subject"].get<std::string>();
    if (w.contains("producer")) b.has_producer = true, b.producer_glob = w["producer"].get<std::string>();
    if (w.contains("consumer")) b.has_consumer = true, b.consumer_glob = w["consumer"].get<std::string>();
    if (w.contains("dlpack_version")) {
      b.has_dlpack_version = true, b.dlpack_version_glob = w["dlpack_version"].get<std::string>();
    }
  }
  b.raw = e;
  return b;
}

// A subject's name as baselines see it: its name, else its path.
std::string name_or_path(const json& subject) {
  std::string name = a::text(subject, "name");
  return name.empty() ? a::text(subject, "path") : name;
}

// A subject name without its version: "numpy 2.1.0" -> "numpy", "mylib v3" -> "mylib". The
// version is the last space-separated word when it starts with a digit (or v + digit); a
// name without one is returned whole.
std::string library_part(const std::string& name) {
  const auto sp = name.find_last_of(' ');
  if (sp == std::string::npos || sp == 0 || sp + 1 >= name.size()) return name;
  const std::string last = name.substr(sp + 1);
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const bool version = digit(last[0]) || ((last[0] == 'v' || last[0] == 'V') && last.size() > 1 && digit(last[1]));
  if (!version) return name;
  std::string lib = name.substr(0, sp);
  while (!lib.empty() && lib.back() == ' ') lib.pop_back();
  return lib.empty() ? name : lib;
}

// A when.subject/producer/consumer glob matches a subject name as written ("numpy 2.1.0",
// "numpy 2.*"), or names the library without a version ("numpy" matches every numpy).
bool name_matches(const std::string& glob, const std::string& name) {
  if (glob_match(glob, name)) return true;
  const std::string lib = library_part(name);
  return lib != name && glob_match(glob, lib);
}

bool entry_matches(const BaselineEntry& e, const Question& q) {
  if (!glob_match(e.case_glob, q.case_id)) return false;
  for (const auto& [has, glob, name] : {std::tuple{e.has_producer, &e.producer_glob, &q.producer},
                                        std::tuple{e.has_consumer, &e.consumer_glob, &q.consumer}}) {
    if (!has) continue;
    if (name->empty() || !name_matches(*glob, *name)) return false;
  }
  if (!e.has_subject && !e.has_dlpack_version) return true;
  for (const Question::Subject& s : q.subjects) {
    bool ok = !e.has_subject || name_matches(e.subject_glob, s.name);
    ok = ok && (!e.has_dlpack_version || glob_match(e.dlpack_version_glob, s.dlpack_version));
    if (ok) return true;
  }
  return false;
}

bool entry_matches(const BaselineEntry& e, const json& run, const json& r) {
  return entry_matches(e, question_of(run, r));
}

json entry_record(const BaselineEntry& e) {
  json j = json::object();
  j["case"] = e.case_glob;
  j["expect"] = e.expect;
  j["reason"] = e.reason;
  j["issue"] = e.issue.empty() ? json() : json(e.issue);
  if (!e.confirmed_by.empty()) j["confirmed_by"] = e.confirmed_by;
  if (e.strict) j["strict"] = true;
  if (e.intermittent) j["intermittent"] = true;
  return j;
}

// Undo an earlier apply_baseline so the observed status is judged afresh.
void restore_observed(json& r) {
  if (!r.contains("baseline") || !r["baseline"].is_object()) return;
  std::string st = a::text(r, "status");
  if (st == "xfail") {
    std::string expect = a::text(r["baseline"], "expect");
    if (!expect.empty()) r["status"] = expect;
  } else if (st == "xpass") {
    r["status"] = "pass";
  }
  r["baseline"] = nullptr;
}

}  // namespace

Baseline load_baseline(const std::string& path) {
  const std::string what = "baseline";
  std::string bytes = detail::read_bytes(what, path);
  json doc = detail::parse_json(what, path, bytes);
  if (!doc.is_object() || !doc.contains("entries") || !doc["entries"].is_array()) {
    throw BadInput(fmt::format(
        FMT_STRING("baseline '{}': expected an object with an \"entries\" array"), path));
  }
  for (const auto& item : doc.items()) {
    const std::string& k = item.key();
    if (k != "entries" && k != "schema" && k != "schema_version" && k != "comment") {
      throw BadInput(fmt::format(FMT_STRING("baseline '{}': unknown key \"{}\""), path, k));
    }
  }
  if (doc.contains("schema") && doc["schema"] != "dlpack-validate/baseline") {
    throw BadInput(fmt::format(
        FMT_STRING("baseline '{}': schema is not \"dlpack-validate/baseline\""), path));
  }
  Baseline b;
  b.sha256 = detail::sha256_hex(bytes);
  std::size_t n = 0;
  for (const auto& e : doc["entries"]) b.entries.push_back(parse_entry(e, path, ++n));
  return b;
}

Baseline load_xfails_list(const std::string& path) {
  const std::string what = "xfails file";
  const std::string bytes = detail::read_bytes(what, path);
  Baseline b;
  b.sha256 = detail::sha256_hex(bytes);
  std::size_t line_no = 0, start = 0;
  while (start <= bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    std::string line = bytes.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const auto last = line.find_last_not_of(" \t\r");
    const std::string id = line.substr(first, last - first + 1);
    if (id.find_first_of(" \t") != std::string::npos)
      throw BadInput(fmt::format(FMT_STRING("{} '{}': line {}: one case id (or glob) per line, not '{}'"), what, path,
                                 line_no, id));
    BaselineEntry e;
    e.case_glob = id;
    e.expect = "unexpected";
    e.reason = fmt::format(FMT_STRING("listed in {} (line {})"), path, line_no);
    e.raw = json{{"case", id}, {"expect", "unexpected"}, {"reason", e.reason}};
    b.entries.push_back(std::move(e));
  }
  return b;
}

Question question_of(const json& run, const json& r) {
  Question q;
  q.case_id = a::text(r, "id");
  q.status = a::status_of(r);
  auto add = [&](long long i) {
    const json& s = a::subject_at(run, i);
    if (!s.is_null()) q.subjects.push_back({name_or_path(s), a::text(s, "dlpack_version")});
  };
  add(a::subject_index(run, r));
  const json& params = a::member(r, "params");
  if (a::text(r, "role") == "pair" && params.is_object()) {
    for (const auto& [end, name] : {std::pair{"producer", &q.producer}, {"consumer", &q.consumer}}) {
      const long long i = a::subject_index_of(run, a::member(params, end));
      add(i);
      if (i >= 0) *name = name_or_path(a::subject_at(run, i));
    }
  }
  return q;
}

const BaselineEntry* match(const Baseline& baseline, const Question& q) {
  for (const BaselineEntry& e : baseline.entries)
    if (entry_matches(e, q)) return &e;
  return nullptr;
}

bool waives(const BaselineEntry& entry, const std::string& status) { return waived(status, entry.expect); }

// Whether every library an entry's `when` names (subject, producer, consumer) is among the
// run's subjects: an entry about a library this run did not load is not stale, only not
// applicable here (one baseline file serves runs of different library sets).
bool applicable(const BaselineEntry& e, const json& run) {
  auto loaded = [&](const std::string& glob) {
    if (!run.contains("subjects") || !run["subjects"].is_array()) return false;
    for (const auto& s : run["subjects"]) {
      std::string name = a::text(s, "name");
      if (name.empty()) name = a::text(s, "path");
      if (name_matches(glob, name)) return true;
    }
    return false;
  };
  return (!e.has_subject || loaded(e.subject_glob)) && (!e.has_producer || loaded(e.producer_glob)) &&
         (!e.has_consumer || loaded(e.consumer_glob));
}

// Whether the run's options narrowed the selection (--filter, --exclude, -k, --requirement,
// --shard, or -x with cases left not run): a case such a run left out says nothing about an
// entry.
bool narrowed(const json& run) {
  const json& o = run.contains("options") && run["options"].is_object() ? run["options"] : json::object();
  if (o.contains("filters") && o["filters"].is_array() && o["filters"] != json::array({"*"})) return true;
  for (const char* key : {"exclude", "keyword", "requirements", "shard"})
    if (o.contains(key) && !o[key].is_null()) return true;
  return a::not_run_count(run) > 0;
}

// Whether any case this run ran (or listed as not run) has an id the entry's case glob matches.
bool case_selected(const BaselineEntry& e, const json& run) {
  for (const auto& r : a::array_at(run, "results"))
    if (r.is_object() && glob_match(e.case_glob, a::text(r, "id"))) return true;
  for (const auto& n : a::array_at(run, "not_run"))
    for (const auto& id : a::array_at(n, "cases"))
      if (id.is_string() && glob_match(e.case_glob, id.get<std::string>())) return true;
  return false;
}

void apply_baseline(json& run, const Baseline& baseline, const std::string& path) {
  std::vector<bool> used(baseline.entries.size(), false);
  json xpass = json::array();
  std::set<std::string> xpass_seen;
  if (run.contains("results") && run["results"].is_array()) {
    for (auto& r : run["results"]) {
      if (!r.is_object()) continue;
      restore_observed(r);
      const Question q = question_of(run, r);
      for (std::size_t i = 0; i < baseline.entries.size(); ++i) {
        const BaselineEntry& e = baseline.entries[i];
        if (!entry_matches(e, q)) continue;
        used[i] = true;
        r["baseline"] = entry_record(e);
        std::string st = a::status_of(r);
        if (waived(st, e.expect)) {
          r["status"] = "xfail";
        } else if (st == "pass" && e.intermittent) {
          // A finding that shows in most runs, not in every one: this run's pass stays a pass
          // (the entry attached says what other runs see), not an xpass.
        } else if (st == "pass") {
          r["status"] = "xpass";
          std::string id = a::text(r, "id");
          if (xpass_seen.insert(id).second) xpass.push_back(id);
        }
        break;
      }
    }
  }
  json stale = json::array();
  json elsewhere = json::array();
  const bool narrow = narrowed(run);
  for (std::size_t i = 0; i < baseline.entries.size(); ++i) {
    if (used[i]) continue;
    // Not applicable, not stale: an entry about a library this run did not load, or, in a run
    // whose options narrowed the selection, about cases it did not select (--filter 'pair.*'
    // with the whole matrix's baseline). A full run still calls an entry stale whose case
    // glob matches no case at all (a case renamed or removed).
    const BaselineEntry& e = baseline.entries[i];
    const bool selected = !narrow || case_selected(e, run);
    (applicable(e, run) && selected ? stale : elsewhere).push_back(e.raw);
  }
  json report = json::object();
  report["path"] = path;
  report["sha256"] = baseline.sha256;
  report["stale"] = std::move(stale);
  report["not_applicable"] = std::move(elsewhere);
  report["xpass"] = std::move(xpass);
  run["baseline_report"] = std::move(report);
  if (!run.contains("options") || !run["options"].is_object()) run["options"] = json::object();
  run["options"]["baseline"] = path;
  finalize_summary(run);
}

json make_baseline(const json& run, const Baseline* applied) {
  // Scope by library name without the version when that still tells the run's subjects
  // apart, so the baseline survives upgrades (a fixed problem then shows as xpass and a stale
  // entry); else by the full name. Glob characters are escaped either way.
  const json& subjects = a::array_at(run, "subjects");
  auto scope_name = [&](long long idx) {
    const std::string full = a::subject_name(run, idx);
    const std::string lib = library_part(full);
    if (lib != full) {
      for (std::size_t k = 0; k < subjects.size(); ++k) {
        const std::string other = a::subject_name(run, static_cast<long long>(k));
        if (other != full && library_part(other) == lib) return glob_escape(full);
      }
    }
    return glob_escape(lib);
  };
  json entries = json::array();
  std::set<std::pair<std::string, std::string>> seen;  // (case, scope)
  std::string recorded;  // the subjects as run, versions included, for the file's comment
  for (std::size_t k = 0; k < subjects.size(); ++k)
    recorded += (recorded.empty() ? "" : "; ") + a::subject_name(run, static_cast<long long>(k));
  if (run.contains("results") && run["results"].is_array()) {
    for (const auto& r : run["results"]) {
      std::string st = a::status_of(r);
      const json& old = a::member(r, "baseline");
      std::string expect;
      if (st == "xfail" && old.is_object()) {
        expect = a::text(old, "expect");
      } else if (st == "skip" && old.is_object()) {
        expect = "skip";
      } else if (st == "fail" || st == "warn" || st == "crash" || st == "timeout" ||
                 st == "error") {
        expect = st;
      }
      if (expect.empty()) continue;
      std::string id = a::text(r, "id");
      // Pair cases are scoped by both ends (when.subject would match either end, and the
      // same case id repeats for every producer/consumer pair).
      json when = json::object();
      const json& p = a::member(r, "params");
      if (a::text(r, "role") == "pair" && !a::text(p, "producer").empty() &&
          !a::text(p, "consumer").empty()) {
        for (const char* end : {"producer", "consumer"}) {
          long long idx = -1;
          try {
            idx = std::stoll(a::text(p, end));
          } catch (...) {
          }
          when[end] = scope_name(idx);
        }
      } else {
        when["subject"] = scope_name(a::subject_index(run, r));
      }
      // The first result decides, as the first matching entry would.
      if (!seen.insert({id, when.dump()}).second) continue;
      json e = json::object();
      e["case"] = glob_escape(id);
      e["expect"] = expect;
      std::string reason = old.is_object() ? a::text(old, "reason") : "";
      e["reason"] = reason.empty() ? std::string(k_written_reason) : reason;
      if (old.is_object() && !a::text(old, "issue").empty()) e["issue"] = old["issue"];
      if (old.is_object() && !a::text(old, "confirmed_by").empty()) e["confirmed_by"] = old["confirmed_by"];
      // The entry that matched, as written: keep its comment and its DLPack-version scope.
      if (old.is_object() && applied != nullptr) {
        for (const BaselineEntry& b : applied->entries) {
          if (!entry_matches(b, run, r)) continue;
          if (b.case_glob == a::text(old, "case")) {
            if (b.raw.contains("comment")) e["comment"] = b.raw["comment"];
            if (b.intermittent) e["intermittent"] = true;
            if (b.has_dlpack_version) when["dlpack_version"] = b.dlpack_version_glob;
          }
          break;
        }
      }
      // A pair entry says which end the finding is charged to (both ends scope it).
      if (!e.contains("comment")) {
        const std::string charge = charge_text(run, r);
        if (!charge.empty()) e["comment"] = charge;
      }
      e["when"] = std::move(when);
      entries.push_back(std::move(e));
    }
  }
  json doc = json::object();
  doc["schema"] = "dlpack-validate/baseline";
  doc["schema_version"] = 1;
  if (!recorded.empty()) doc["comment"] = "written by --write-baseline from a run of: " + recorded;
  doc["entries"] = std::move(entries);
  return doc;
}

}  // namespace dlpv::verdict
