// app/src/app.cpp: select -> check inputs -> run -> record -> write -> summarise.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/explore.hpp>
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/verdict.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <sstream>

namespace dlpv {

namespace {

/// "cannot write or replace PATH: why", in words a user acts on. A report is written beside its
/// path (PATH.tmp.PID) and then moved over it, so what decides is its folder: missing, not a
/// folder, a pseudo filesystem (/proc, /sys), read-only, or closed to this user.
std::string unwritable(const std::string& path, int err) {
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string head = "cannot write or replace '" + path + "': ";
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return head + "it is a folder; name a file";
  if (stat(dir.c_str(), &st) != 0) return head + "its folder '" + dir + "' does not exist";
  if (!S_ISDIR(st.st_mode)) return head + "'" + dir + "' is not a folder";
  struct statfs fs {};
  if (statfs(dir.c_str(), &fs) == 0) {
    // The kernel's pseudo filesystems hold its own files, never a report.
    constexpr long kProc = 0x9fa0, kSysfs = 0x62656572, kCgroup2 = 0x63677270, kDebugfs = 0x64626720;
    const long type = static_cast<long>(fs.f_type);
    const char* kind = type == kProc ? "proc" : type == kSysfs ? "sysfs" : type == kCgroup2 ? "cgroup2"
                     : type == kDebugfs ? "debugfs" : nullptr;
    if (kind)
      return head + fmt::format("'{}' is on the {} pseudo filesystem, which holds only the kernel's own files (write "
                                "the report to an ordinary folder)", dir, kind);
  }
  if (err == EROFS) return head + "'" + dir + "' is on a read-only filesystem";
  if (err == EACCES || err == EPERM)
    return head + "no permission to create a file in '" + dir + "' (the report is written there first, then moved "
                  "over the path)";
  return head + std::strerror(err);
}

/// For a --filter that matches no case: the glob it probably meant, in words (or ""). Tries the
/// usual slips: a bare id segment ("deleter" for "deleter.*" or "*deleter*"), '_' for '.' and
/// back, a missing trailing ".*".
std::string near_miss(const AppConfig& cfg) {
  std::string out;
  for (const std::string& g : cfg.filters) {
    auto count = [&](const std::string& pattern) {
      size_t n = 0;
      for (const CaseInfo& c : Registry::instance().cases())
        if (applies_to(c, cfg.kind) && glob_match(pattern, c.id)) ++n;
      return n;
    };
    if (count(g) > 0) continue;
    std::vector<std::string> tries{g + ".*", g + "*", "*" + g + "*"};
    for (const char from : {'_', '.'}) {
      std::string swapped = g;
      std::replace(swapped.begin(), swapped.end(), from, from == '_' ? '.' : '_');
      if (swapped != g) {
        tries.push_back(swapped);
        tries.push_back(swapped + "*");
        tries.push_back("*" + swapped + "*");
      }
    }
    for (const std::string& t : tries) {
      const size_t n = count(t);
      if (n == 0) continue;
      out += fmt::format("; --filter '{}' matches nothing: did you mean --filter '{}' ({} case{})?", g, t, n,
                         n == 1 ? "" : "s");
      break;
    }
  }
  return out;
}

/// Fail before the run, not after it, when a report path cannot be written.
void check_writable(const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw BadInput{unwritable(path, errno)};
  std::fclose(f);
  std::remove(tmp.c_str());
}

std::vector<std::string> output_paths(const AppConfig& cfg) {
  std::vector<std::string> out;
  for (const reports::Format& f : reports::formats())
    if (const std::string p = cfg.report_path(f.option); !p.empty() && p != "-") out.push_back(p);
  if (!cfg.write_baseline_path.empty()) out.push_back(cfg.write_baseline_path);
  if (cfg.explore > 0 && !cfg.examples_path.empty()) out.push_back(cfg.examples_path);
  return out;
}

verdict::Baseline load_baseline_or_bad_input(const std::string& path) {
  try {
    return verdict::load_baseline(path);
  } catch (const verdict::BadInput& e) {
    throw BadInput{e.what()};
  }
}

/// Colours for a terminal: the status word of each result line and the verdict, unless NO_COLOR
/// is set (https://no-color.org) or the stream is not a terminal.
std::string paint(const std::string& text, std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  if ((no_color && *no_color) || !isatty(fileno(stream))) return text;
  static const std::pair<const char*, const char*> words[] = {
      {"FAIL", "\033[1;31m"}, {"CRASH", "\033[1;35m"}, {"TIMEOUT", "\033[1;35m"}, {"ERROR", "\033[1;35m"},
      {"WARN", "\033[33m"},   {"XPASS", "\033[33m"},   {"XFAIL", "\033[36m"},    {"SKIP", "\033[2m"},
      {"PASS", "\033[32m"}};
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t lead = line.find_first_not_of(' ');
    bool done = false;
    for (const auto& [word, colour] : words) {
      const std::string w = word;
      if (lead != std::string::npos && line.compare(lead, w.size(), w) == 0 &&
          (line.size() == lead + w.size() || line[lead + w.size()] == ' ')) {
        out += line.substr(0, lead) + colour + w + "\033[0m" + line.substr(lead + w.size());
        done = true;
        break;
      }
      if (line.rfind("verdict: " + w, 0) == 0) {
        out += std::string("verdict: ") + colour + w + "\033[0m" + line.substr(9 + w.size());
        done = true;
        break;
      }
    }
    if (!done) out += line;
    out += "\n";
  }
  return out;
}

/// What a run says while it runs, on stderr: on a terminal one live line (cases done of all,
/// seconds, the case running); elsewhere (CI logs) a line every 10 s, so a run with hangs is
/// never long silence. Quiet runs say nothing.
class ProgressLine {
 public:
  explicit ProgressLine(bool quiet) : quiet_(quiet), tty_(isatty(2) != 0), t0_(Clock::now()), last_(t0_) {
    // DLPV_PROGRESS_SECONDS: the interval of the lines off a terminal (default 10).
    if (const char* e = std::getenv("DLPV_PROGRESS_SECONDS")) every_s_ = std::max(0.0, std::atof(e));
  }
  void operator()(size_t done, size_t total, const std::string& running) {
    if (quiet_) return;
    const auto now = Clock::now();
    const double elapsed = std::chrono::duration<double>(now - t0_).count();
    if (tty_) {
      if (running.empty()) {
        std::fputs("\r\033[K", stderr);
      } else {
        const std::string safe = reports::terminal_text(running);  // labels may name a library
        const std::string name = safe.size() > 100 ? safe.substr(0, 97) + "..." : safe;
        std::fprintf(stderr, "\r\033[K[%zu/%zu] %.0f s  %s", done, total, elapsed, name.c_str());
      }
      std::fflush(stderr);
      return;
    }
    if (running.empty() || std::chrono::duration<double>(now - last_).count() < every_s_) return;
    last_ = now;
    std::fprintf(stderr, "progress: %zu of %zu cases done in %.0f s; running %s\n", done, total, elapsed,
                 reports::terminal_text(running).c_str());
    std::fflush(stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool quiet_;
  bool tty_;
  double every_s_ = 10.0;
  Clock::time_point t0_, last_;
};

/// Judge (baseline) and write every requested artefact, then print the summary.
/// Everything about the inputs that can be wrong, checked before anything runs (bad input
/// fails at once, not after the suite): subjects, output paths, the baseline (returned).
std::optional<verdict::Baseline> check_inputs(const AppConfig& cfg) {
  if (cfg.preflight)
    for (const std::string& s : cfg.subjects)
      if (std::string why = cfg.preflight(s); !why.empty()) throw BadInput{why};
  for (const std::string& p : output_paths(cfg)) check_writable(p);
  if (cfg.baseline_path.empty() && cfg.xfails_path.empty()) return std::nullopt;
  verdict::Baseline b;
  if (!cfg.baseline_path.empty()) b = load_baseline_or_bad_input(cfg.baseline_path);
  if (!cfg.xfails_path.empty()) {
    try {
      verdict::Baseline list = verdict::load_xfails_list(cfg.xfails_path);
      if (cfg.baseline_path.empty()) b.sha256 = list.sha256;
      for (auto& e : list.entries) b.entries.push_back(std::move(e));
    } catch (const verdict::BadInput& e) {
      throw BadInput{e.what()};
    }
  }
  return b;
}

/// The name the record gives the baseline: the JSON file, the xfails list, or both.
std::string baseline_label(const AppConfig& cfg) {
  if (cfg.xfails_path.empty()) return cfg.baseline_path;
  if (cfg.baseline_path.empty()) return cfg.xfails_path;
  return cfg.baseline_path + " + " + cfg.xfails_path;
}

int finish(nlohmann::ordered_json& record, const AppConfig& cfg,
           const std::optional<verdict::Baseline>& baseline) {
  if (baseline) verdict::apply_baseline(record, *baseline, baseline_label(cfg));
  verdict::finalize_summary(record);
  auto render = [&](const std::string& path, auto writer) {
    if (path.empty()) return;
    std::ostringstream text;
    writer(text);
    if (path == "-") std::fputs(text.str().c_str(), stdout);  // --json -: stdout is the record's
    else write_file_atomic(path, text.str());
  };
  for (const reports::Format& f : reports::formats())
    render(cfg.report_path(f.option), [&](std::ostream& o) { f.write(record, o); });
  render(cfg.write_baseline_path, [&](std::ostream& o) {
    o << verdict::make_baseline(record, baseline ? &*baseline : nullptr).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  });
  append_step_summary(record);
  const std::string text = record.contains("bench") ? reports::bench_text(record) : reports::text_summary(record, cfg.verbose);
  // With the record on stdout (--json -), the summary goes to stderr.
  std::FILE* out = cfg.report_path("json") == "-" ? stderr : stdout;
  const std::string shown = cfg.quiet ? text.substr(text.rfind("\nverdict:") + 1) : text;
  std::fputs(paint(shown, out).c_str(), out);
  std::fflush(out);
  return record["summary"].value("exit_code", 1);
}

/// The question a baseline is asked about result `r` ending with `status`, as its record will
/// put it (run_record.cpp: each subject's name, path and DLPack version; a pair case's ends
/// in its params): the verdict's typed question, no record built to ask it.
verdict::Question question_of(const std::vector<SubjectInfo>& subjects, const CaseResult& r, Status status) {
  verdict::Question q;
  q.case_id = r.info->id;
  q.status = to_string(status);
  auto subject = [&](int i) -> const SubjectInfo* {
    return i >= 0 && static_cast<size_t>(i) < subjects.size() ? &subjects[static_cast<size_t>(i)] : nullptr;
  };
  auto name_of = [](const SubjectInfo& s) { return s.name.empty() ? s.path : s.name; };
  if (const SubjectInfo* own = subject(r.subject)) q.subjects.push_back({name_of(*own), own->version_text()});
  if (r.info->role == Role::pair && r.peer >= 0) {
    for (auto [i, name] : {std::pair{r.subject, &q.producer}, {r.peer, &q.consumer}})
      if (const SubjectInfo* s = subject(i)) {
        q.subjects.push_back({name_of(*s), s->version_text()});
        *name = name_of(*s);
      }
  }
  return q;
}

Isolation parse_isolation(const std::string& s) {
  if (s == "worker") return Isolation::worker;
  if (s == "case") return Isolation::per_case;
  if (s == "none") return Isolation::none;
  throw BadInput{fmt::format("--isolate must be worker, case or none (got '{}')", s)};
}

/// `--list --json PATH` ("-": stdout): every selected case's declaration, including the
/// fixtures it claims as proofs and the file that declares it.
int list_json(const std::vector<const CaseInfo*>& selected, const std::string& path) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CaseInfo* c : selected) {
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [k, v] : c->params) params[k] = v;
    out.push_back({{"id", c->id},
                   {"title", c->title},
                   {"severity", to_string(c->severity)},
                   {"requirements", c->requirements},
                   {"role", to_string(c->role)},
                   {"params", params},
                   {"needs", c->needs},
                   {"kinds", c->kinds},
                   {"proven_by", c->proofs},
                   {"source", c->source},
                   {"line", c->line}});
  }
  const std::string text = out.dump(1) + "\n";
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw BadInput{"--json: cannot write " + path};
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return 0;
}

}  // namespace

/// Write a file atomically (temp file + rename) so no half-written report is ever left.
void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw BadInput{unwritable(path, errno)};
    f << text;
    if (!f.flush()) throw BadInput{fmt::format("cannot write '{}'", path)};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw BadInput{unwritable(path, err)};
  }
}

namespace {
/// The record of an --explore run: the draws in options, and on each drawn result what it was
/// and, where it did not pass, the simplest input that still fails (in its message too, so
/// every report shows it).
void note_exploration(nlohmann::ordered_json& record, const RunResult& run, const AppConfig& cfg,
                      const std::vector<std::string>& drawn, const std::map<size_t, Shrunk>& shrunk) {
  record["options"]["explore"] = {{"draws", cfg.explore}, {"seed", cfg.seed}, {"drawn", drawn.size()}};
  for (size_t i = 0; i < run.results.size(); ++i) {
    if (std::find(drawn.begin(), drawn.end(), run.results[i].info->id) == drawn.end()) continue;
    auto& r = record["results"][i];
    r["explore"] = {{"seed", cfg.seed}};
    const auto s = shrunk.find(i);
    if (s == shrunk.end()) continue;
    const Shrunk& k = s->second;
    r["explore"]["shrunk_to"] = {{"id", k.id}, {"params", k.params}, {"status", k.status}, {"tries", k.tries}, {"rounds", k.rounds}};
    const std::string words =
        k.id == run.results[i].info->id
            ? fmt::format("an input drawn by --explore (seed {}); no simpler input ({} tried) ends this way", cfg.seed,
                          k.tries)
            : fmt::format("an input drawn by --explore (seed {}); the simplest that still ends this way: {} "
                          "({} simpler inputs tried; replay: --filter {})",
                          cfg.seed, k.id, k.tries, k.id);
    r["message"] = r.value("message", "") + (r.value("message", "").empty() ? "" : " ") + "[" + words + "]";
    if (!cfg.quiet) std::fprintf(stderr, "explore: %s %s: %s\n", run.results[i].info->id.c_str(), k.status.c_str(), words.c_str());
  }
}

/// The case ids of an --examples file: the first word of each line, # starting a comment. A file
/// that does not exist yet holds none (the first --explore run makes it).
std::vector<std::string> read_examples(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  if (!in) {
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0) throw BadInput{fmt::format("--examples {}: cannot be read", path)};
    return out;
  }
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string id;
    if (words >> id) out.push_back(id);
  }
  return out;
}

/// An --explore run keeps what it found: each drawn input that did not pass, and the simplest
/// input it was shrunk to, appended to the --examples file (once each; a line says what it did,
/// on which subject, with which seed), so the next run replays them first.
void remember_examples(const AppConfig& cfg, const RunResult& run, const std::vector<std::string>& drawn,
                       const std::map<size_t, Shrunk>& shrunk) {
  std::vector<std::string> known = read_examples(cfg.examples_path);
  std::string add;
  auto keep = [&](const std::string& id, const std::string& why) {
    if (std::find(known.begin(), known.end(), id) != known.end()) return;
    known.push_back(id);
    add += fmt::format("{}  # {}\n", id, why);
  };
  for (size_t i = 0; i < run.results.size(); ++i) {
    const CaseResult& r = run.results[i];
    if (r.outcome.status == Status::pass || r.outcome.status == Status::skip ||
        std::find(drawn.begin(), drawn.end(), r.info->id) == drawn.end())
      continue;
    const std::string subject = r.subject >= 0 && static_cast<size_t>(r.subject) < run.subjects.size()
                                    ? run.subjects[static_cast<size_t>(r.subject)].name
                                    : std::string("?");
    keep(r.info->id, fmt::format("{} on {}, drawn by --explore {} --seed {}", to_string(r.outcome.status), subject,
                                 cfg.explore, cfg.seed));
    if (const auto s = shrunk.find(i); s != shrunk.end() && s->second.id != r.info->id)
      keep(s->second.id, fmt::format("{} on {}, the simplest input {} shrinks to", s->second.status, subject,
                                     r.info->id));
  }
  if (add.empty()) return;
  std::ofstream out(cfg.examples_path, std::ios::app);
  out << add;
  if (!out) throw BadInput{fmt::format("--examples {}: cannot be written", cfg.examples_path)};
  if (!cfg.quiet) std::fprintf(stderr, "explore: kept in %s for the next run: %zu input(s)\n",
                               cfg.examples_path.c_str(), static_cast<size_t>(std::count(add.begin(), add.end(), '\n')));
}

}  // namespace

int run_app(const AppConfig& cfg) {
  // Option values were checked against the options table (options::config_from).
  const Isolation isolation = parse_isolation(cfg.isolate);
  if (cfg.bench) {
    if (cfg.subjects.empty()) throw BadInput{"bench: no subject given (see --help)"};
    const auto baseline = check_inputs(cfg);
    nlohmann::ordered_json record = run_bench(cfg);
    return finish(record, cfg, baseline);
  }
  std::vector<const CaseInfo*> selected;
  for (const CaseInfo* c : select_cases(Selection{cfg.filters, cfg.excludes, cfg.requirements, cfg.keywords}))
    if (applies_to(*c, cfg.kind)) selected.push_back(c);
  // A point of a covered family's space that the cover does not hold (an id --explore drew, or
  // a shrunk input) is run by naming it: --filter ID.
  for (const std::string& f : cfg.filters)
    if (f.find_first_of("*?[") == std::string::npos && Registry::instance().family_of(f) &&
        std::none_of(selected.begin(), selected.end(), [&](const CaseInfo* c) { return c->id == f; }))
      if (const CaseInfo* c = Registry::instance().find(f); c && applies_to(*c, cfg.kind)) selected.push_back(c);
  if (selected.empty()) {
    for (const std::string& r : cfg.requirements)
      if (!find_requirement(r) && r.find_first_of("*?[") == std::string::npos)
        throw BadInput{fmt::format("--requirement {}: no such requirement id in the checklist (ids look like DEL-02)", r)};
    throw BadInput{"no case matches the given --filter/-k/--exclude/--requirement selection" + near_miss(cfg)};
  }

  // --explore: the ids drawn beyond the covers, run after the rest. The draws depend on the
  // selection, N and the seed only (not on what is replayed below).
  std::vector<std::string> drawn;
  std::vector<const CaseInfo*> draws;
  if (cfg.explore > 0)
    for (const CaseInfo* c : draw_inputs(selected, cfg.explore, cfg.seed, cfg.excludes))
      if (applies_to(*c, cfg.kind)) draws.push_back(c);
  // Points of a covered family's space outside the cover that an earlier --explore run found
  // (--examples FILE) or that a baseline entry names by id: run with the rest, before the draws,
  // where the selection takes them.
  {
    const Selection sel{cfg.filters, cfg.excludes, cfg.requirements, cfg.keywords};
    auto taken = [&](const std::string& id) {
      auto same = [&](const CaseInfo* c) { return c->id == id; };
      return std::any_of(selected.begin(), selected.end(), same) || std::any_of(draws.begin(), draws.end(), same);
    };
    auto replay = [&](const std::string& id) {
      if (id.find_first_of("*?[") != std::string::npos || !Registry::instance().family_of(id) || taken(id)) return;
      if (const CaseInfo* c = Registry::instance().find(id); c && applies_to(*c, cfg.kind) && selection_keeps(sel, *c))
        selected.push_back(c);
    };
    if (!cfg.examples_path.empty())
      for (const std::string& id : read_examples(cfg.examples_path)) replay(id);
    if (!cfg.baseline_path.empty())
      for (const verdict::BaselineEntry& e : load_baseline_or_bad_input(cfg.baseline_path).entries) replay(e.case_glob);
  }
  for (const CaseInfo* c : draws) {
    selected.push_back(c);
    drawn.push_back(c->id);
  }

  if (cfg.shard_n > 0) {
    // The i-th selected id (in id order, counting from 0) belongs to part i mod N + 1: the same
    // split on every machine, and neighbouring ids (one case's dtypes, one family) spread over
    // the parts. A part may be empty when there are more parts than cases.
    std::vector<const CaseInfo*> part;
    for (size_t i = 0; i < selected.size(); ++i)
      if (static_cast<int>(i % static_cast<size_t>(cfg.shard_n)) == cfg.shard_k - 1) part.push_back(selected[i]);
    selected = std::move(part);
  }
  if (cfg.list && !cfg.report_path("json").empty()) return list_json(selected, cfg.report_path("json"));
  if (cfg.list) {
    for (const CaseInfo* c : selected) {
      std::string reqs;
      for (const auto& r : c->requirements) reqs += (reqs.empty() ? "" : ",") + r;
      std::printf("%-58s %-7s %-24s %s\n", c->id.c_str(), to_string(c->severity), reqs.c_str(),
                  c->title.c_str());
    }
    return 0;
  }
  if (cfg.subjects.empty()) throw BadInput{"no subject given (see --help)"};
  const auto baseline = check_inputs(cfg);

  RunOptions opt;
  opt.subject_paths = cfg.subjects;
  opt.filters = cfg.filters;
  opt.timeout_s = cfg.timeout_s;
  opt.load_timeout_s = cfg.load_timeout_s;
  opt.isolation = isolation;
  opt.jobs = cfg.jobs;
  opt.worker_command = cfg.worker_command;
  opt.loader = cfg.loader;
  opt.subject_kind = cfg.kind;
  RecordOptions ro;
  ro.command_line = cfg.command_line;
  ro.invocation = cfg.invocation;
  ro.filters = cfg.filters;
  ro.excludes = cfg.excludes;
  ro.requirements = cfg.requirements;
  ro.keywords = cfg.keywords;
  ro.exitfirst = cfg.exitfirst;
  if (cfg.shard_n > 0) ro.shard = fmt::format("{}/{}", cfg.shard_k, cfg.shard_n);
  ro.timeout_s = cfg.timeout_s;
  ro.load_timeout_s = cfg.load_timeout_s;
  ro.isolation = isolation;
  ro.strict = cfg.strict;
  ro.deterministic = cfg.deterministic;
  ProgressLine progress(cfg.quiet);
  opt.progress = std::ref(progress);
  if (cfg.exitfirst) {
    // Unexpected as the verdict will judge it: fail, crash, timeout, error (warn with --strict),
    // unless the baseline expects it.
    opt.stop_after = [&](const std::vector<SubjectInfo>& subjects, const CaseResult& r) {
      const Status st = r.outcome.status;
      const bool bad = st == Status::fail || st == Status::crash || st == Status::timeout || st == Status::error ||
                       (cfg.strict && st == Status::warn);
      if (!bad || !baseline) return bad;
      const verdict::BaselineEntry* e = verdict::match(*baseline, question_of(subjects, r, st));
      return !(e && verdict::waives(*e, to_string(st)));
    };
  }
  // Scheduling only: a case the baseline expects to crash or time out runs in a side worker,
  // so the main worker (every subject loaded) survives it. The prediction reads the baseline's
  // crash/timeout entries the way apply_baseline will judge the result.
  verdict::Baseline deaths;
  if (baseline)
    for (const verdict::BaselineEntry& e : baseline->entries)
      if (e.expect == "crash" || e.expect == "timeout") deaths.entries.push_back(e);
  if (!deaths.entries.empty()) {
    opt.expect_death = [&](const std::vector<SubjectInfo>& subjects, const CaseResult& r) {
      for (const Status st : {Status::crash, Status::timeout}) {
        const verdict::BaselineEntry* e = verdict::match(deaths, question_of(subjects, r, st));
        if (e && verdict::waives(*e, to_string(st))) return true;
      }
      return false;
    };
  }
  RunResult run;
  try {
    run = run_cases(opt, selected);
  } catch (const SubjectLoadError& e) {
    throw BadInput{e.message};
  }
  if (!run.lanes_why.empty() && !cfg.quiet) std::fprintf(stderr, "jobs: %s\n", run.lanes_why.c_str());

  const std::map<size_t, Shrunk> shrunk = drawn.empty() ? std::map<size_t, Shrunk>() : shrink_failures(opt, run, drawn, cfg.quiet);
  nlohmann::ordered_json record = make_run_record(run, ro);
  if (cfg.explore > 0) note_exploration(record, run, cfg, drawn, shrunk);
  if (cfg.explore > 0 && !cfg.examples_path.empty()) remember_examples(cfg, run, drawn, shrunk);
  return finish(record, cfg, baseline);
}

int finish_record(nlohmann::ordered_json& record, const AppConfig& cfg) {
  const auto baseline = check_inputs(cfg);
  return finish(record, cfg, baseline);
}

int run_report(const AppConfig& cfg, const std::string& record_path) {
  nlohmann::ordered_json record;
  try {
    record = verdict::load_run(record_path);
  } catch (const verdict::BadInput& e) {
    throw BadInput{e.what()};
  }
  const auto baseline = check_inputs(cfg);
  if (cfg.strict) record["options"]["strict"] = true;
  return finish(record, cfg, baseline);
}

std::string terminal_text(const std::string& text, bool one_line) { return reports::terminal_text(text, one_line); }

int run_app_guarded(const AppConfig& cfg, const char* program) {
  try {
    return run_app(cfg);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, reports::terminal_text(e.message).c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, reports::terminal_text(e.what()).c_str());
    return kExitInternal;
  }
}

}  // namespace dlpv
