// app/src/options.cpp: the options table (options.hpp) and the one place values are checked.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/ids.hpp>
#include <dlpack_validate/options.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace dlpv::options {

namespace {
constexpr unsigned kAll = kRun | kBench | kReport;
constexpr unsigned kRunBench = kRun | kBench;

/// The rows with one row per report format (reports::formats(): the option, its help) put
/// where the marker row stands: right after --exitfirst.
std::vector<Spec> with_formats(std::vector<Spec> rows) {
  std::vector<Spec> out;
  for (const Spec& r : rows) {
    out.push_back(r);
    if (std::string(r.name) != "exitfirst") continue;
    for (const reports::Format& f : reports::formats())
      out.push_back({f.option, "", f.option, Type::path, "", 0, false, "", "PATH", kAll | kPytest, f.help});
  }
  return out;
}
}  // namespace

const std::vector<Spec>& table() {
  // The defaults of the time limits are the engine's (case.hpp: kDefaultCaseTimeoutS,
  // kDefaultLoadTimeoutS), written there once.
  static const std::string timeout = fmt::format("{:g}", kDefaultCaseTimeoutS);
  static const std::string load_timeout = fmt::format("{:g}", kDefaultLoadTimeoutS);
  static const bench::Settings bench_defaults;
  static const std::string iterations = fmt::format("{}", bench_defaults.iterations);
  static const std::string batches = fmt::format("{}", bench_defaults.batches);
  static const std::string batch_ms = fmt::format("{:g}", bench_defaults.target_batch_ms);
  static const std::vector<Spec> rows = with_formats({
      {"list", "", "", Type::flag, "", 0, false, "", "", kRun, "list the selected cases and exit"},
      {"filter", "", "filters", Type::globs, "", 0, false, "", "GLOB", kRun | kPytest,
       "run only cases whose id matches GLOB (repeatable)"},
      {"exclude", "", "exclude", Type::globs, "", 0, false, "", "GLOB", kRun | kPytest,
       "leave out cases whose id matches GLOB (repeatable)"},
      {"keyword", "-k", "keyword", Type::globs, "", 0, false, "", "EXPR", kRun,
       "run only cases whose id matches EXPR, as pytest's -k does: words are substrings of the id "
       "(case-insensitive), combined with and, or, not and parentheses (repeatable: every one must match)"},
      {"requirement", "", "requirements", Type::globs, "", 0, false, "", "ID", kRun,
       "run only cases citing checklist requirement ID (a glob: 'DEL-*'; repeatable)"},
      {"shard", "", "shard", Type::shard, "", 0, false, "", "K/N", kRun,
       "run only part K of N of the selected cases (a deterministic split of their ids: the i-th "
       "selected id, counting from 0, goes to part i mod N + 1); records of all N parts merge "
       "into the whole run's with 'report merge'"},
      {"explore", "", "explore", Type::whole, "", 1, true, "", "N", kRun,
       "draw N more inputs from the input spaces of the selected families whose cases are a cover "
       "(python.input.*, python.request.*, input.*): each is a case with the id its values give, run "
       "after the others; a drawn input that does not pass is shrunk to the simplest input that "
       "still fails the same way (the first value of each axis is its simplest), and both ids are "
       "reported; either id replays alone with --filter ID"},
      {"seed", "", "seed", Type::whole, "1", 0, true, "", "S", kRun,
       "the seed --explore draws from: the same seed and N draw the same inputs"},
      {"examples", "", "examples", Type::path, "", 0, false, "", "FILE", kRun,
       "a file of inputs to replay (one case id a line, # comments): those of the selected families "
       "run before the drawn ones (the draws do not change), and an --explore run adds every drawn input that did not pass, "
       "and its shrunk form, as property-testing tools keep their failing examples"},
      {"exitfirst", "-x", "exitfirst", Type::flag, "", 0, false, "", "", kRun,
       "stop after the first unexpected result (the cases left are listed once as not run)"},
      // here: one row per report format (reports::formats())
      {"baseline", "", "baseline", Type::path, "", 0, false, "", "PATH", kAll | kPytest,
       "expected results (JSON): matching failures become xfail, passes xpass"},
      {"xfails_file", "", "xfails_file", Type::path, "", 0, false, "", "PATH", kAll | kPytest,
       "a plain list of case ids or globs expected to go wrong, one per line, '#' comments (the "
       "array-api-tests habit): each waives any of fail, warn, crash, timeout, error; with --baseline, "
       "after its entries"},
      {"write_baseline", "", "write_baseline", Type::path, "", 0, false, "", "PATH", kAll | kPytest,
       "write a baseline that accepts this run's unexpected results to PATH"},
      {"timeout", "", "timeout", Type::seconds, timeout.c_str(), 0, false, "", "S", kRunBench | kPytest,
       "per-case time limit in seconds (bench: per route, beyond its expected length); a case that "
       "times out is run once more alone, with twice the time, before it is reported"},
      {"load_timeout", "", "load_timeout", Type::seconds, load_timeout.c_str(), 0, false, "", "S", kRun,
       "time limit in seconds for loading a subject in a worker (dlopen, or import and its load checks), "
       "apart from case time"},
      {"isolate", "", "isolate", Type::choice, "worker", 0, false, "worker|case|none", "MODE", kRunBench,
       "worker (a reused worker process, or interpreter), case (one per case) or none "
       "(in-process, for debugging)"},
      {"jobs", "-j", "jobs", Type::whole, "0", 0, true, "", "N", kRun,
       "run N cases at once, in lanes with workers of their own (0: one per core this process may use; "
       "fewer when the cases are few, or when memory would not hold that many workers: a line on stderr "
       "says so); the report's order and every status are those of -j 1"},
      {"strict", "", "strict", Type::flag, "", 0, false, "", "", kAll | kPytest,
       "warnings and unexpected passes count as failures"},
      {"deterministic", "", "deterministic", Type::flag, "", 0, false, "", "", kRunBench,
       "omit timestamps, durations and host names from the record (golden files)"},
      {"quiet", "-q", "quiet", Type::flag, "", 0, false, "", "", kAll, "print only the verdict line"},
      {"verbose", "-v", "verbose", Type::flag, "", 0, false, "", "", kAll,
       "list every skip reason and expected failure in the summary (default: one line per kind of reason)"},
      {"iterations", "", "", Type::whole, iterations.c_str(), 0, true, "", "N", kBench,
       "operations per batch (0: sized to about --batch-ms per batch)"},
      {"batches", "", "", Type::whole, batches.c_str(), 1, true, "", "N", kBench, "measured batches per route"},
      {"batch_ms", "", "", Type::number, batch_ms.c_str(), 0, false, "", "MS", kBench,
       "batch length when --iterations is 0, in milliseconds"},
      {"bench_baseline", "", "", Type::path, "", 0, false, "", "PATH", kBench,
       "an earlier run record (or its bench section): a route whose net median exceeds the baseline's "
       "x threshold is a warning (fails only with --strict)"},
      {"compare", "", "", Type::path, "", 0, false, "", "OLD.json", kBench,
       "an earlier bench record (or its bench section): print each route's net median as a ratio to "
       "it, with no verdict (for a regression alarm that can fail, use --bench-baseline)"},
      {"bench_threshold", "", "", Type::number, "1.5", 1, false, "", "X", kBench,
       "regression threshold ratio"},
  });
  return rows;
}

const Spec* find(const std::string& name) {
  for (const Spec& s : table())
    if (name == s.name) return &s;
  return nullptr;
}

std::string help_of(const Spec& spec) {
  const bool shows_default = *spec.fallback && spec.type != Type::flag && spec.type != Type::path &&
                             spec.type != Type::globs;
  return shows_default ? fmt::format("{} (default {})", spec.help, spec.fallback) : std::string(spec.help);
}

std::vector<FormatName> report_formats() {
  std::vector<FormatName> out;
  for (const reports::Format& f : reports::formats()) out.push_back({f.option, f.extension});
  return out;
}

std::string flag_of(const Spec& spec) {
  std::string flag = std::string("--") + spec.name;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

namespace {

bool parse_number(const std::string& text, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0' && errno == 0 && std::isfinite(out);
}

std::string choices_text(const Spec& spec) {
  std::string out;
  for (const char* c = spec.choices; *c; ++c) out += *c == '|' ? std::string(", ") : std::string(1, *c);
  return out;
}

}  // namespace

bool parse_shard(const std::string& text, int& k, int& n) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return false;
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  if (a.find_first_not_of("0123456789") != std::string::npos || b.find_first_not_of("0123456789") != std::string::npos ||
      a.size() > 6 || b.size() > 6)
    return false;
  k = std::atoi(a.c_str());
  n = std::atoi(b.c_str());
  return n >= 1 && k >= 1 && k <= n;
}

std::string check(const Spec& spec, const std::string& text) {
  double v = 0;
  switch (spec.type) {
    case Type::flag:
    case Type::path:
    case Type::globs:
      return {};
    case Type::seconds:
      return parse_number(text, v) && v > 0 ? "" : "'" + text + "' is not a positive number of seconds";
    case Type::number:
      if (parse_number(text, v) && (spec.inclusive ? v >= spec.floor : v > spec.floor)) return {};
      return fmt::format("'{}' is not a number {} {:g}", text, spec.inclusive ? "at or above" : "above", spec.floor);
    case Type::whole:
      if (parse_number(text, v) && v >= spec.floor && v == std::floor(v) && v < 1e15) return {};
      return fmt::format("'{}' is not a whole number >= {:g}", text, spec.floor);
    case Type::shard: {
      int k = 0, n = 0;
      return parse_shard(text, k, n) ? "" : "'" + text + "' is not K/N with 1 <= K <= N (e.g. 2/4)";
    }
    case Type::choice: {
      const std::string all = std::string("|") + spec.choices + "|";
      if (!text.empty() && text.find('|') == std::string::npos && all.find("|" + text + "|") != std::string::npos)
        return {};
      return fmt::format("'{}' is not one of {}", text, choices_text(spec));
    }
  }
  return {};
}

AppConfig config_from(const Values& values, Naming naming) {
  for (const auto& [name, texts] : values)
    if (!find(name)) throw std::logic_error("options: no option named '" + name + "'");
  auto name_of = [&](const Spec& s) { return naming == Naming::flags ? flag_of(s) : std::string(s.keyword); };
  // The checked text of a single-valued option (its default when absent).
  auto one = [&](const char* name) -> std::string {
    const Spec& s = *find(name);
    auto it = values.find(name);
    if (it == values.end() || it->second.empty()) return s.fallback;
    if (it->second.size() > 1 && s.type != Type::flag)
      throw BadInput{fmt::format("{} given {} times (once at most)", name_of(s), it->second.size())};
    const std::string& text = it->second.back();
    if (std::string why = check(s, text); !why.empty()) throw BadInput{name_of(s) + ": " + why};
    return text;
  };
  auto on = [&](const char* name) {
    auto it = values.find(name);
    return it != values.end() && !it->second.empty() && it->second.back() != "0" && it->second.back() != "false";
  };
  auto many = [&](const char* name) {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>() : it->second;
  };
  AppConfig cfg;
  cfg.list = on("list");
  cfg.filters = many("filter");
  cfg.excludes = many("exclude");
  cfg.requirements = many("requirement");
  cfg.keywords = many("keyword");
  for (const char* name : {"filter", "exclude", "requirement"})
    for (const std::string& g : many(name))
      if (const std::string why = glob_problem(g); !why.empty())
        throw BadInput{fmt::format("{}: malformed glob '{}': {}", name_of(*find(name)), g, why)};
  for (const std::string& k : cfg.keywords) {
    try {
      keyword_match(k, "");
    } catch (const std::invalid_argument& e) {
      throw BadInput{e.what()};
    }
  }
  if (const std::string shard = one("shard"); !shard.empty()) parse_shard(shard, cfg.shard_k, cfg.shard_n);
  if (const std::string n = one("explore"); !n.empty()) cfg.explore = std::strtoll(n.c_str(), nullptr, 10);
  cfg.seed = std::strtoull(one("seed").c_str(), nullptr, 10);
  cfg.examples_path = one("examples");
  cfg.exitfirst = on("exitfirst");
  for (const reports::Format& f : reports::formats())
    if (const std::string path = one(f.option); !path.empty()) cfg.report_paths[f.option] = path;
  cfg.baseline_path = one("baseline");
  cfg.xfails_path = one("xfails_file");
  cfg.write_baseline_path = one("write_baseline");
  cfg.timeout_s = std::strtod(one("timeout").c_str(), nullptr);
  cfg.load_timeout_s = std::strtod(one("load_timeout").c_str(), nullptr);
  cfg.isolate = one("isolate");
  cfg.jobs = static_cast<int>(std::strtol(one("jobs").c_str(), nullptr, 10));
  cfg.strict = on("strict");
  cfg.deterministic = on("deterministic");
  cfg.quiet = on("quiet");
  cfg.verbose = on("verbose");
  cfg.bench_iterations = std::strtoll(one("iterations").c_str(), nullptr, 10);
  cfg.bench_batches = static_cast<int>(std::strtol(one("batches").c_str(), nullptr, 10));
  cfg.bench_batch_ms = std::strtod(one("batch_ms").c_str(), nullptr);
  cfg.bench_baseline_path = one("bench_baseline");
  cfg.bench_threshold = std::strtod(one("bench_threshold").c_str(), nullptr);
  cfg.bench_compare_path = one("compare");
  return cfg;
}

}  // namespace dlpv::options
