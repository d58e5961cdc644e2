// app/include/dlpack_validate/app.hpp: one validation run from parsed options to exit
// code, shared by the dlpack-validate CLI and `python -m validator` so both behave alike.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/runner.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace dlpv {

/// Appends the Markdown report to the file $GITHUB_STEP_SUMMARY names. Returns true when
/// something was written; false when the variable is unset or empty or the file cannot be
/// written. Never throws: a CI summary must not change the outcome of a run.
bool append_step_summary(const nlohmann::ordered_json& run) noexcept;

/// Bad input from the user: one line on stderr, exit code 2.
struct BadInput {
  std::string message;
};

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

/// One run's configuration. The front-ends get it from options::config_from (options.hpp),
/// which fills every option from the options table; the defaults below are the table's.
struct AppConfig {
  std::vector<std::string> subjects;   ///< LIB.so paths or Python package names
  std::vector<std::string> filters;
  std::vector<std::string> excludes;      ///< --exclude GLOB
  std::vector<std::string> requirements;  ///< --requirement ID (globs over checklist ids)
  std::vector<std::string> keywords;      ///< -k EXPR (pytest's habit; keyword_match)
  int shard_k = 0, shard_n = 0;           ///< --shard K/N (n 0: the whole selection)
  long long explore = 0;                  ///< --explore N: draws beyond the covers (0: none)
  unsigned long long seed = 1;            ///< --seed S: what the draws start from
  /// --examples FILE: inputs earlier --explore runs found failing, replayed before any draw;
  /// an --explore run adds the ones it finds (empty: none kept)
  std::string examples_path;
  bool exitfirst = false;                 ///< -x: stop after the first unexpected result
  /// Report format (reports::formats(): "json", "html", "junit", "summary_md") -> the path
  /// asked for; formats not asked for are absent. "json" may be "-": the record on stdout
  /// (the summary then on stderr).
  std::map<std::string, std::string> report_paths;
  /// The path asked for format `option`, "" when none.
  std::string report_path(const std::string& option) const {
    const auto it = report_paths.find(option);
    return it == report_paths.end() ? std::string() : it->second;
  }
  std::string baseline_path;        ///< expected results (xfail/xpass, stale entries)
  std::string write_baseline_path;  ///< write a baseline accepting this run's failures
  double timeout_s = kDefaultCaseTimeoutS;
  double load_timeout_s = kDefaultLoadTimeoutS;  ///< loading a subject (--load-timeout), apart from case time
  std::string isolate = "worker";      ///< worker | case | none
  int jobs = 0;                        ///< -j N: cases at once (0: one per core)
  bool strict = false;
  bool deterministic = false;
  bool quiet = false;
  bool verbose = false;  ///< every skip reason in the text summary
  bool list = false;
  std::vector<std::string> command_line;
  /// The program as a shell command that runs this same tool again from the directory the run
  /// started in ("/abs/dlpack-validate", "PYTHONPATH=/abs /usr/bin/python3 -P -m validator"),
  /// shell-quoted; the record's `invocation`, which the reports' re-run commands start with.
  std::string invocation;
  std::vector<std::string> worker_command;
  SubjectLoader loader;
  /// Cheap check of a subject spec in the supervisor (nothing loaded): "" or the reason.
  std::function<std::string(const std::string&)> preflight;
  /// Subject kind the run is for ("plugin", "python"): decides which cases --list shows.
  std::string kind = "plugin";
  /// `bench` (dlpack_validate/bench.hpp): time the exchange routes instead of running cases.
  bool bench = false;
  long long bench_iterations = bench::Settings{}.iterations;  ///< per batch; 0 = sized automatically
  int bench_batches = bench::Settings{}.batches;
  double bench_batch_ms = bench::Settings{}.target_batch_ms;  ///< batch length when bench_iterations is 0
  std::string bench_baseline_path;   ///< earlier record (or its bench section) to compare with
  std::string xfails_path;           ///< --xfails-file: a plain list of case ids expected to go wrong
  std::string bench_compare_path;    ///< earlier record to print ratios against (no verdict)
  double bench_threshold = 1.5;      ///< net median above baseline x threshold = a warning (the table's default)
};

/// Runs (or lists) and returns the exit code; throws BadInput for bad input.
int run_app(const AppConfig& config);

/// `report RUN.json`: re-render reports from a saved record (optionally judged against a
/// baseline). Returns the record's exit code; throws BadInput.
int run_report(const AppConfig& config, const std::string& record_path);

/// `bench SUBJECT...`: measure (in a worker process unless --isolate=none), compare with
/// --bench-baseline, and return the run record holding the "bench" section. Throws BadInput.
nlohmann::ordered_json run_bench(const AppConfig& config);

/// Writes `text` to `path` through a temporary file and a rename, so no half-written report is
/// ever left. Throws BadInput when it cannot.
void write_file_atomic(const std::string& path, const std::string& text);

/// A record made elsewhere (report, merge): judged against cfg's baseline when one is given,
/// written to every requested output and summarised. Returns its exit code; throws BadInput.
int finish_record(nlohmann::ordered_json& record, const AppConfig& config);

/// `report merge A.json B.json ... [-o OUT.json]`: one record from the records of shards,
/// machines or CI jobs (subjects united, every case exactly once), then written and summarised
/// as `report` does (cfg.report_path("json") is the output). Two records that disagree about one case
/// (same subject, id and peer) are a conflict: listed on stderr and in the record's `merge`
/// section, and the exit code is 1. Throws BadInput.
int run_merge(const AppConfig& config, const std::vector<std::string>& inputs);

/// `diff OLD.json NEW.json`: what changed between two records (regressions, fixes, other
/// status changes, new and removed cases) as text on stdout and, with cfg.report_path("summary_md"), as
/// Markdown. Exit 1 when a case present in both went from expected to unexpected, and when the
/// records are of different libraries (never an all-clear across them) unless
/// `allow_different_subjects`, which judges the cases matched by position alone. Throws BadInput.
int run_diff(const AppConfig& config, const std::string& old_path, const std::string& new_path,
             bool allow_different_subjects = false);

/// run_app with the error channels mapped to exit codes and one-line messages (prefix
/// "dlpack-validate: error: ..." / "... internal error: ...").
int run_app_guarded(const AppConfig& config, const char* program);

/// Library (or user) text for a terminal: the one rule of reports::terminal_text, for the front
/// ends (the Python module, the pytest plugin), which reach the reports through the app.
std::string terminal_text(const std::string& text, bool one_line = true);

}  // namespace dlpv
