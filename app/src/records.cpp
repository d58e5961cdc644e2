// app/src/records.cpp: commands over saved run records: `report merge` (records of shards,
// machines or CI jobs into one) and `diff` (what changed between two records).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/verdict.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

namespace dlpv {

using nlohmann::ordered_json;

namespace {

ordered_json load_or_bad_input(const std::string& path) {
  try {
    return verdict::load_run(path);
  } catch (const verdict::BadInput& e) {
    throw BadInput{e.what()};
  }
}

std::string text_at(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// An index field (subject, peer, charged_to.subject): the number, or -1 for null/absent/garbage.
int index_at(const ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : -1;
}

/// What makes two records' subjects the same: kind, the name it reported (with its version) and
/// the DLPack version it exports; not its path (a Python package's file lies in whatever venv
/// the machine made). The n-th subject with that description in one record is the n-th in
/// another (one run may name two builds of a plugin that describe themselves alike).
std::vector<std::string> subject_keys(const ordered_json& subjects) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  for (const ordered_json& s : subjects) {
    const std::string key = text_at(s, "kind") + "\x1f" + text_at(s, "name") + "\x1f" + text_at(s, "dlpack_version");
    out.push_back(key + "\x1f" + std::to_string(seen[key]++));
  }
  return out;
}

/// The library a subject is, whatever its release: its name without a trailing version
/// ("numpy 1.26.4" -> "numpy"), the n-th of that library in the record.
std::vector<std::string> library_keys(const ordered_json& subjects) {
  std::vector<std::string> out;
  std::map<std::string, int> seen;
  for (const ordered_json& s : subjects) {
    std::string name = text_at(s, "name");
    const size_t space = name.rfind(' ');
    if (space != std::string::npos && space + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[space + 1])))
      name.resize(space);
    out.push_back(name + (seen[name]++ ? "#" + std::to_string(seen[name] - 1) : ""));
  }
  return out;
}

std::string subject_label(const ordered_json& subjects, int i) {
  if (i < 0 || static_cast<size_t>(i) >= subjects.size()) return "?";
  const std::string name = text_at(subjects[static_cast<size_t>(i)], "name");
  return name.empty() ? text_at(subjects[static_cast<size_t>(i)], "path") : name;
}

/// Where a result sits in a single run's order (Supervisor's plan): per subject, by id, a pair
/// case once per consumer in index order.
using Slot = std::tuple<int, std::string, int>;

Slot slot_of(const ordered_json& r) { return {index_at(r, "subject"), text_at(r, "id"), index_at(r, "peer")}; }

/// The part of a result that is its verdict, what a merge must agree on: the status. Messages
/// may name run-local subject indexes ("consumer subject 1 does not implement ..."), so two
/// runs of one pair in different records can word the same verdict differently.
std::string verdict_of(const ordered_json& r) { return text_at(r, "status"); }

void remap_result(ordered_json& r, const std::vector<int>& to) {
  auto map = [&](int i) { return i >= 0 && static_cast<size_t>(i) < to.size() ? to[static_cast<size_t>(i)] : -1; };
  const int s = map(index_at(r, "subject")), p = map(index_at(r, "peer"));
  r["subject"] = s;
  if (r.contains("peer") && !r["peer"].is_null()) r["peer"] = p;
  if (r.contains("params") && r["params"].is_object()) {
    if (r["params"].contains("producer")) r["params"]["producer"] = std::to_string(s);
    if (r["params"].contains("consumer")) r["params"]["consumer"] = std::to_string(p);
  }
  if (r.contains("charged_to") && r["charged_to"].is_object())
    r["charged_to"]["subject"] = map(index_at(r["charged_to"], "subject"));
}

}  // namespace

namespace {

/// A merge of records, one input at a time (run_merge): subjects matched by library and
/// renumbered, results by their slot (the first kept, a different verdict a conflict), and the
/// rest of each record (incidents, cases not run, requirements, flags, the baseline report).
struct Merge {
  explicit Merge(const std::vector<std::string>& in) : inputs(in) {}
  const std::vector<std::string>& inputs;
  ordered_json subjects = ordered_json::array();
  std::map<std::string, int> subject_index;
  std::map<Slot, std::pair<size_t, ordered_json>> results;  // slot (merged indexes) -> (input, result)
  ordered_json conflicts = ordered_json::array();
  size_t duplicates = 0;
  ordered_json incidents = ordered_json::array(), not_run = ordered_json::array();
  std::map<std::string, ordered_json> requirements;
  bool complete = true, deterministic = true;
  double duration = 0;
  std::string started;
  // baseline_report: an entry is stale only when no input's cases matched it; xpass from all.
  std::optional<ordered_json> stale;
  std::set<std::string> xpass;
  ordered_json baseline_report = nullptr;

  /// Input k's subjects among the merged ones; returns where each of its indexes goes.
  std::vector<int> add_subjects(const ordered_json& rec, size_t k) {
    std::vector<int> to;
    const std::vector<std::string> keys = subject_keys(rec["subjects"]);
    for (size_t j = 0; j < keys.size(); ++j) {
      const ordered_json& s = rec["subjects"][j];
      const std::string& key = keys[j];
      auto [it, fresh] = subject_index.emplace(key, static_cast<int>(subjects.size()));
      if (fresh) {
        ordered_json copy = s;
        copy["index"] = it->second;
        subjects.push_back(copy);
      } else if (s.value("capabilities", ordered_json()) != subjects[static_cast<size_t>(it->second)].value("capabilities", ordered_json())) {
        conflicts.push_back({{"subject", subject_label(subjects, it->second)},
                             {"message", fmt::format("'{}' and '{}' describe {} with different capabilities",
                                                     inputs[k], inputs.front(), subject_label(subjects, it->second))}});
      }
      to.push_back(it->second);
    }
    return to;
  }

  /// Input k's results, renumbered; a slot already held keeps the first, a different verdict
  /// there is a conflict.
  void add_results(const ordered_json& rec, size_t k, const std::vector<int>& to) {
    for (ordered_json r : rec["results"]) {
      if (!r.is_object()) throw BadInput{fmt::format("report merge: '{}': a result is not an object", inputs[k])};
      remap_result(r, to);
      const Slot slot = slot_of(r);
      auto [it, fresh] = results.emplace(slot, std::make_pair(k, r));
      if (fresh) continue;
      ++duplicates;
      if (verdict_of(it->second.second) == verdict_of(r)) continue;
      const std::string where = std::get<2>(slot) >= 0
                                    ? fmt::format("{} -> {}", subject_label(subjects, std::get<0>(slot)),
                                                  subject_label(subjects, std::get<2>(slot)))
                                    : subject_label(subjects, std::get<0>(slot));
      conflicts.push_back({{"case", std::get<1>(slot)},
                           {"subject", where},
                           {"message", fmt::format("{} on {}: '{}' says {} ({}), '{}' says {} ({}); the first is kept",
                                                   std::get<1>(slot), where, inputs[it->second.first],
                                                   text_at(it->second.second, "status"), text_at(it->second.second, "message"),
                                                   inputs[k], text_at(r, "status"), text_at(r, "message"))}});
    }
  }

  /// Input k's incidents, cases not run, requirements, flags, times and baseline report.
  void add_rest(const ordered_json& rec, const std::vector<int>& to) {
    auto remap_subject = [&](ordered_json& j) {
      const int i = index_at(j, "subject");
      j["subject"] = i >= 0 && static_cast<size_t>(i) < to.size() ? ordered_json(to[static_cast<size_t>(i)]) : ordered_json();
    };
    if (rec.contains("incidents") && rec["incidents"].is_array())
      for (ordered_json i : rec["incidents"]) {
        remap_subject(i);
        incidents.push_back(i);
      }
    if (rec.contains("not_run") && rec["not_run"].is_array())
      for (ordered_json n : rec["not_run"]) {
        remap_subject(n);
        not_run.push_back(n);
      }
    if (rec.contains("requirements") && rec["requirements"].is_object())
      for (const auto& [id, q] : rec["requirements"].items()) requirements.emplace(id, q);
    complete = complete && rec.value("complete", false);
    deterministic = deterministic && rec.value("deterministic", false);
    if (rec.contains("duration_s") && rec["duration_s"].is_number()) duration += rec["duration_s"].get<double>();
    const std::string at = text_at(rec, "started_at");
    if (!at.empty() && (started.empty() || at < started)) started = at;
    if (rec.contains("baseline_report") && rec["baseline_report"].is_object()) {
      const ordered_json& b = rec["baseline_report"];
      if (baseline_report.is_null()) baseline_report = b;
      ordered_json mine = b.value("stale", ordered_json::array());
      if (!stale) {
        stale = mine;
      } else {
        ordered_json kept = ordered_json::array();
        for (const ordered_json& e : *stale)
          if (std::find(mine.begin(), mine.end(), e) != mine.end()) kept.push_back(e);
        stale = kept;
      }
      for (const ordered_json& x : b.value("xpass", ordered_json::array()))
        if (x.is_string()) xpass.insert(x.get<std::string>());
    }
  }

  /// The merged record's fields, over `out` (a copy of the first input).
  void write(ordered_json& out, const AppConfig& cfg, const std::vector<ordered_json>& records) {
    out["complete"] = complete;
    out["deterministic"] = deterministic;
    out["command_line"] = cfg.command_line;
    // The parts' program, where every part names the same one (shards of one run, the pytest
    // plugin's chunks): the reports' "run one case again" commands start with it. Parts run by
    // different programs leave it out: no one of them re-runs every case.
    bool one_program = true;
    for (const ordered_json& rec : records)
      one_program = one_program && rec.value("invocation", ordered_json()) == records.front().value("invocation", ordered_json());
    if (!one_program || !records.front().contains("invocation")) out.erase("invocation");
    out["started_at"] = deterministic || started.empty() ? ordered_json() : ordered_json(started);
    out["duration_s"] = deterministic ? 0.0 : duration;
    if (out.contains("options") && out["options"].is_object()) out["options"].erase("shard");
    out["subjects"] = subjects;
    ordered_json reqs = ordered_json::object();
    for (const auto& [id, q] : requirements) reqs[id] = q;
    out["requirements"] = reqs;
    // Counted from the kept results by finalize_summary (summing the inputs' matrices would
    // count a pair found in two records twice); set here for its place in the record.
    out["pair_matrix"] = ordered_json::array();
    ordered_json rs = ordered_json::array();
    for (auto& [slot, entry] : results) rs.push_back(std::move(entry.second));
    out["results"] = rs;
    out["incidents"] = incidents;
    out["not_run"] = not_run;
    if (out.contains("supervisor"))
      out["supervisor"] = {{"workers_started", nullptr}, {"spares_unused", nullptr}, {"load_wait_s", nullptr},
                           {"max_rss_kib", nullptr}, {"jobs", nullptr}, {"lanes", nullptr}, {"lanes_why", ""},
                           {"confirmations", nullptr}, {"hangs_known", nullptr}};
    if (!baseline_report.is_null()) {
      baseline_report["stale"] = stale ? *stale : ordered_json::array();
      ordered_json xs = ordered_json::array();
      for (const std::string& x : xpass) xs.push_back(x);
      baseline_report["xpass"] = xs;
    }
    out["baseline_report"] = baseline_report;
    ordered_json from = ordered_json::array();
    for (size_t k = 0; k < inputs.size(); ++k)
      from.push_back({{"path", inputs[k]}, {"results", records[k]["results"].size()},
                      {"shard", records[k].contains("options") && records[k]["options"].is_object()
                                    ? records[k]["options"].value("shard", ordered_json())
                                    : ordered_json()}});
    out["merge"] = {{"inputs", from}, {"duplicates", duplicates}, {"conflicts", conflicts}};
  }
};

}  // namespace

int run_merge(const AppConfig& cfg, const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw BadInput{"report merge: no record given (report merge A.json B.json ... -o OUT.json)"};
  std::vector<ordered_json> records;
  for (const std::string& path : inputs) {
    records.push_back(load_or_bad_input(path));
    if (records.back().contains("bench")) throw BadInput{fmt::format("report merge: '{}' is a bench record", path)};
  }
  Merge m(inputs);
  for (size_t k = 0; k < records.size(); ++k) {
    const std::vector<int> to = m.add_subjects(records[k], k);
    m.add_results(records[k], k, to);
    m.add_rest(records[k], to);
  }
  ordered_json out = records.front();
  m.write(out, cfg, records);
  verdict::finalize_summary(out);
  for (const ordered_json& c : m.conflicts)
    std::fprintf(stderr, "report merge: conflict: %s\n", text_at(c, "message").c_str());
  std::fprintf(stderr, "report merge: %zu records, %zu subjects, %zu results (%zu duplicates, %zu conflicts)\n",
               records.size(), m.subjects.size(), out["results"].size(), m.duplicates, m.conflicts.size());
  const int rc = finish_record(out, cfg);
  return m.conflicts.empty() ? rc : 1;
}

namespace {

/// One case in a record for `diff`: matched across records by the subjects' library (name
/// without version, library_keys) or position, the id and the peer's.
struct Entry {
  std::string subject, peer, id, status, message;
};

std::map<std::string, Entry> entries_of(const ordered_json& rec, bool by_position) {
  std::map<std::string, Entry> out;
  const std::vector<std::string> libs = library_keys(rec["subjects"]);
  auto who = [&](int i) -> std::string {
    if (i < 0) return "";
    if (by_position) return fmt::format("#{}", i);
    return static_cast<size_t>(i) < libs.size() ? libs[static_cast<size_t>(i)] : "?";
  };
  for (const ordered_json& r : rec["results"]) {
    if (!r.is_object()) continue;
    Entry e{who(index_at(r, "subject")), who(index_at(r, "peer")), text_at(r, "id"), text_at(r, "status"),
            text_at(r, "message")};
    e.subject = e.subject.empty() ? "?" : e.subject;
    out[e.subject + "\x1f" + e.id + "\x1f" + e.peer] = e;
  }
  return out;
}

bool unexpected(const std::string& status) {
  return status == "fail" || status == "crash" || status == "timeout" || status == "error";
}

/// Lower is better; skips stand apart (not tested is neither better nor worse).
int grade(const std::string& status) {
  if (status == "pass" || status == "xpass") return 0;
  if (status == "warn") return 1;
  if (status == "xfail") return 2;
  if (status == "fail") return 3;
  if (status == "crash" || status == "timeout" || status == "error") return 4;
  return -1;
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n' || c == '\r') out += ' ';
    else if (c == '`') out += '\'';
    else out += c;
  }
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

}  // namespace

int run_diff(const AppConfig& cfg, const std::string& old_path, const std::string& new_path,
             bool allow_different_subjects) {
  const ordered_json old_rec = load_or_bad_input(old_path), new_rec = load_or_bad_input(new_path);
  // Subjects are matched by library: their name without its version ("numpy 2.3.5" and "numpy
  // 2.4.6" are both numpy). Records whose libraries differ but number the same (two plugins
  // that name themselves differently) are matched by position.
  const auto libs_old = library_keys(old_rec["subjects"]), libs_new = library_keys(new_rec["subjects"]);
  const bool same_subjects =
      std::set<std::string>(libs_old.begin(), libs_old.end()) == std::set<std::string>(libs_new.begin(), libs_new.end());
  const bool by_position = !same_subjects && libs_old.size() == libs_new.size();
  const auto before = entries_of(old_rec, by_position), after = entries_of(new_rec, by_position);
  auto name = [&](const Entry& e) {
    auto label = [&](const std::string& who) {
      if (!by_position || who.empty()) return who;
      const int i = std::atoi(who.c_str() + 1);
      return subject_label(new_rec["subjects"], i);
    };
    return e.peer.empty() ? fmt::format("{} [{}]", e.id, label(e.subject))
                          : fmt::format("{} [{} -> {}]", e.id, label(e.subject), label(e.peer));
  };
  std::vector<std::pair<Entry, Entry>> regressions, fixes, changes;
  std::vector<Entry> added, removed;
  for (const auto& [key, n] : after) {
    auto it = before.find(key);
    if (it == before.end()) {
      added.push_back(n);
      continue;
    }
    const Entry& o = it->second;
    if (o.status == n.status) continue;
    if (!unexpected(o.status) && unexpected(n.status)) regressions.push_back({o, n});
    else if (unexpected(o.status) && !unexpected(n.status) && n.status != "skip") fixes.push_back({o, n});
    else changes.push_back({o, n});
  }
  for (const auto& [key, o] : before)
    if (!after.count(key)) removed.push_back(o);

  std::ostringstream text, md;
  text << fmt::format("diff {} -> {}\n", old_path, new_path);
  md << fmt::format("## dlpack-validate diff\n\n`{}` → `{}`\n\n", md_cell(old_path), md_cell(new_path));
  // Records of different libraries: said first, and never an all-clear (a library's failures
  // are no regression of another's passes, nor its passes a fix).
  std::string differ;
  if (!same_subjects) {
    auto names = [](const ordered_json& subjects) {
      std::string out;
      for (size_t i = 0; i < subjects.size(); ++i) out += (i ? ", " : "") + subject_label(subjects, static_cast<int>(i));
      return out.empty() ? std::string("none") : out;
    };
    differ = fmt::format("the subjects differ: before {}; now {} ({})", names(old_rec["subjects"]),
                         names(new_rec["subjects"]),
                         by_position ? "cases matched by position, as if each library were the other's next build"
                                     : "cases matched by library where the names agree; the others are new and removed");
    text << differ << "\n";
    md << "**" << md_cell(differ) << "**\n\n";
  }
  // Different libraries without --allow-different-subjects: the counts alone, no listing (cases
  // matched by position across two libraries are no one's regressions), and exit 1.
  const bool refused = !same_subjects && !allow_different_subjects;
  md << "| regressions | fixes | other status changes | new cases | removed cases |\n|---:|---:|---:|---:|---:|\n";
  md << fmt::format("| {} | {} | {} | {} | {} |\n", regressions.size(), fixes.size(), changes.size(), added.size(),
                    removed.size());
  auto section = [&](const char* title, const char* what, const std::vector<std::pair<Entry, Entry>>& rows) {
    text << fmt::format("{} ({}): {}\n", title, what, rows.size());
    if (rows.empty() || refused) return;
    md << fmt::format("\n### {} ({})\n\n| case | before | after | message now |\n|---|---|---|---|\n", title, what);
    for (const auto& [o, n] : rows) {
      text << fmt::format("  {:<8} -> {:<8} {}\n", o.status, n.status, name(n));
      if (!n.message.empty() && n.status != "pass") text << fmt::format("           {}\n", n.message);
      md << fmt::format("| `{}` | {} | {} | {} |\n", md_cell(name(n)), o.status, n.status, md_cell(n.message));
    }
  };
  section("Regressions", "expected before, unexpected now", regressions);
  section("Fixes", "unexpected before, passing or expected now", fixes);
  // Grade changes are sorted worse-first so a pass -> warn is not lost among skip changes.
  std::stable_sort(changes.begin(), changes.end(), [](const auto& a, const auto& b) {
    return grade(a.second.status) - grade(a.first.status) > grade(b.second.status) - grade(b.first.status);
  });
  section("Other status changes", "grade changes, newly skipped or newly tested", changes);
  auto listing = [&](const char* title, const std::vector<Entry>& rows) {
    text << fmt::format("{}: {}\n", title, rows.size());
    if (rows.empty() || refused) return;
    md << fmt::format("\n### {}\n\n| case | status |\n|---|---|\n", title);
    size_t shown = 0;
    for (const Entry& e : rows) {
      if (unexpected(e.status) || cfg.verbose || shown < 20) {
        text << fmt::format("  {:<8} {}\n", e.status, name(e));
        ++shown;
      }
      md << fmt::format("| `{}` | {} |\n", md_cell(name(e)), e.status);
    }
    if (shown < rows.size()) text << fmt::format("  ... {} more (-v lists them)\n", rows.size() - shown);
  };
  listing("New cases", added);
  listing("Removed cases", removed);
  const int rc = regressions.empty() && !refused ? 0 : 1;
  if (refused) {
    size_t now_unexpected = 0;
    for (const auto& [key, n] : after) now_unexpected += unexpected(n.status) ? 1 : 0;
    const std::string why = fmt::format(
        "{} regression{} among the cases matched, {} unexpected result{} in the new record; "
        "--allow-different-subjects lists and judges the matched cases, as if one library were the other's next build",
        regressions.size(), regressions.size() == 1 ? "" : "s", now_unexpected, now_unexpected == 1 ? "" : "s");
    text << "verdict: SUBJECTS DIFFER, no all-clear across different libraries (" << why << ")\n";
    md << "\n**Subjects differ**, no all-clear across different libraries (" << md_cell(why) << ")\n";
  } else {
    text << fmt::format("verdict: {} ({} regression{}{})\n", rc ? "REGRESSED" : "no regression", regressions.size(),
                        regressions.size() == 1 ? "" : "s", same_subjects ? "" : ", subjects differ");
    md << fmt::format("\n**{}** ({} regression{}{})\n", rc ? "Regressed" : "No regression", regressions.size(),
                      regressions.size() == 1 ? "" : "s", same_subjects ? "" : ", subjects differ");
  }
  std::fputs(text.str().c_str(), stdout);
  std::fflush(stdout);
  if (const std::string path = cfg.report_path("summary_md"); !path.empty()) write_file_atomic(path, md.str());
  return rc;
}

}  // namespace dlpv
