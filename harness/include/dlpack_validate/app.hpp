// harness/include/dlpack_validate/app.hpp: one validation run from parsed options to exit
// code, shared by the dlpack-validate CLI and `python -m validator` so both behave alike.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>

#include <functional>
#include <string>
#include <vector>

namespace dlpv {

/// Bad input from the user: one line on stderr, exit code 2.
struct BadInput {
  std::string message;
};

inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

struct AppConfig {
  std::vector<std::string> subjects;   ///< LIB.so paths or Python package names
  std::vector<std::string> filters;
  std::vector<std::string> excludes;      ///< --exclude GLOB
  std::vector<std::string> requirements;  ///< --requirement ID (globs over checklist ids)
  bool exitfirst = false;                 ///< -x: stop after the first unexpected result
  std::string json_path;                  ///< "-": the record on stdout (the summary on stderr)
  std::string html_path;
  std::string junit_path;
  std::string summary_md_path;
  std::string baseline_path;        ///< expected results (xfail/xpass, stale entries)
  std::string write_baseline_path;  ///< write a baseline accepting this run's failures
  double timeout_s = 10.0;
  double load_timeout_s = 120.0;       ///< loading a subject (--load-timeout), apart from case time
  std::string isolate = "worker";      ///< worker | case | none
  bool strict = false;
  bool deterministic = false;
  bool quiet = false;
  bool list = false;
  std::vector<std::string> command_line;
  std::vector<std::string> worker_command;
  SubjectLoader loader;
  /// Cheap check of a subject spec in the supervisor (nothing loaded): "" or the reason.
  std::function<std::string(const std::string&)> preflight;
  /// Subject kind the run is for ("plugin", "python"): decides which cases --list shows.
  std::string kind = "plugin";
  /// `bench` (dlpack_validate/bench.hpp): time the exchange routes instead of running cases.
  bool bench = false;
  long long bench_iterations = 0;    ///< per batch; 0 = sized automatically
  int bench_batches = 21;
  double bench_batch_ms = 5.0;       ///< batch length when bench_iterations is 0
  std::string bench_baseline_path;   ///< earlier record (or its bench section) to compare with
  double bench_threshold = 1.5;      ///< net median above baseline x threshold = a warning
};

/// Runs (or lists) and returns the exit code; throws BadInput for bad input.
int run_app(const AppConfig& config);

/// `report RUN.json`: re-render reports from a saved record (optionally judged against a
/// baseline). Returns the record's exit code; throws BadInput.
int run_report(const AppConfig& config, const std::string& record_path);

/// run_app with the error channels mapped to exit codes and one-line messages (prefix
/// "dlpack-validate: error: ..." / "... internal error: ...").
int run_app_guarded(const AppConfig& config, const char* program);

}  // namespace dlpv
