// validator/main.cpp: the dlpack-validate CLI: CLI11 parsing only; the run itself is
// dlpv::run_app (shared with the Python shim).
// Exit codes: 0 nothing unexpected, 1 unexpected results, 2 bad input, 3 internal error.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>

#ifndef DLPV_CASE_UNITS
#error "DLPV_CASE_UNITS (number of case files) must be defined by the build"
#endif

namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  buf[n] = 0;
  return buf;
}

/// A number option's check with a message in words ("--timeout: 'abc' is not a positive number
/// of seconds"), instead of CLI11's range text. `floor`: the bound; `inclusive`: whether it is
/// allowed; `whole`: integers only.
CLI::Validator number_check(const std::string& what, double floor, bool inclusive, bool whole = false) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end && *end == '\0' && errno == 0 && std::isfinite(v);
        const bool ok = number && (inclusive ? v >= floor : v > floor) && (!whole || v == std::floor(v));
        return ok ? std::string() : "'" + text + "' is not " + what;
      },
      "", "");
}

int run_cli(int argc, char** argv) {
  CLI::App app{"dlpack-validate: DLPack conformance validator for producer/consumer libraries.\n"
               "Exit codes: 0 nothing unexpected, 1 unexpected fail/crash/timeout/error (or warn\n"
               "with --strict), 2 bad input, 3 internal error.",
               "dlpack-validate"};
  app.footer("Docs (in the repository): README.md; docs/plugin.md (writing a plugin), docs/baselines.md,\n"
             "docs/ci.md (CI recipes), docs/run-record.md (the --json record); the case ids: cases/README.md.");
  dlpv::AppConfig cfg;
  app.add_option("subjects", cfg.subjects, "plugin libraries to validate (LIB.so ...)");
  app.add_flag("--list", cfg.list, "list the selected cases and exit");
  app.add_option("--filter", cfg.filters, "run only cases whose id matches GLOB (repeatable)")
      ->allow_extra_args(false)  // one GLOB per --filter: a subject after it stays a subject
      ->type_name("GLOB");
  app.add_option("--exclude", cfg.excludes, "leave out cases whose id matches GLOB (repeatable)")
      ->allow_extra_args(false)
      ->type_name("GLOB");
  app.add_option("--requirement", cfg.requirements,
                 "run only cases citing checklist requirement ID (a glob: 'DEL-*'; repeatable)")
      ->allow_extra_args(false)
      ->type_name("ID");
  app.add_flag("-x,--exitfirst", cfg.exitfirst,
               "stop after the first unexpected result (the cases left are listed once as not run)");
  app.add_option("--json", cfg.json_path, "write the canonical JSON run record to PATH ('-': stdout, the "
                                          "summary then goes to stderr; with --list: the declarations)")
      ->type_name("PATH");
  app.add_option("--html", cfg.html_path, "write a self-contained HTML report to PATH")->type_name("PATH");
  app.add_option("--junit", cfg.junit_path, "write JUnit XML to PATH")->type_name("PATH");
  app.add_option("--summary-md", cfg.summary_md_path,
                 "write a Markdown summary to PATH (also appended to $GITHUB_STEP_SUMMARY when set)")
      ->type_name("PATH");
  app.add_option("--baseline", cfg.baseline_path,
                 "expected results (JSON): matching failures become xfail, passes xpass")
      ->type_name("PATH");
  app.add_option("--write-baseline", cfg.write_baseline_path,
                 "write a baseline that accepts this run's unexpected results to PATH")
      ->type_name("PATH");
  app.add_option("--timeout", cfg.timeout_s, "per-case time limit in seconds (default 10); a case that "
                 "times out is run once more alone, with twice the time, before it is reported")
      ->check(number_check("a positive number of seconds", 0.0, false))->type_name("S");
  app.add_option("--load-timeout", cfg.load_timeout_s, "time limit in seconds for loading a subject in a worker "
                 "(dlopen or import and its probes), apart from case time (default 120)")
      ->check(number_check("a positive number of seconds", 0.0, false))->type_name("S");
  app.add_option("--isolate", cfg.isolate, "worker (reused worker process, default), case (one "
                 "process per case) or none (in-process, for debugging)")
      ->check(CLI::IsMember({"worker", "case", "none"}));
  app.add_flag("--strict", cfg.strict, "warnings and unexpected passes count as failures");
  app.add_flag("--deterministic", cfg.deterministic,
               "omit timestamps, durations and host names from the record (golden files)");
  app.add_flag("-q,--quiet", cfg.quiet, "print only the verdict line");
  app.set_version_flag("--version", std::string("dlpack-validate ") + dlpv::kToolVersion);
  std::string record_path;
  CLI::App* report = app.add_subcommand(
      "report", "re-render reports from a saved run record: report RUN.json --html out.html ...");
  report->add_option("record", record_path, "a run record written by --json")->required();
  report->fallthrough();  // --html/--junit/--summary-md/--baseline/--strict belong to the main app
  CLI::App* bench = app.add_subcommand(
      "bench", "time each exchange route of the plugins (ns/op: median, p10, p90 over batches; the "
               "harness's own overhead measured and subtracted): bench LIB.so... [--json out.json]");
  bench->add_option("subjects", cfg.subjects, "plugin libraries (LIB.so ...)")->required();
  bench->add_option("--iterations", cfg.bench_iterations,
                    "operations per batch (default 0: sized to about 5 ms per batch)")
      ->check(number_check("a whole number >= 0", 0.0, true, true))->type_name("N");
  bench->add_option("--batches", cfg.bench_batches, "measured batches per route (default 21)")
      ->check(number_check("a whole number >= 1", 0.0, false, true))->type_name("N");
  bench->add_option("--batch-ms", cfg.bench_batch_ms,
                    "batch length when --iterations is 0, in milliseconds (default 5)")
      ->check(number_check("a positive number of milliseconds", 0.0, false))->type_name("MS");
  bench->add_option("--bench-baseline", cfg.bench_baseline_path,
                    "an earlier run record (or its bench section): a route whose net median exceeds "
                    "the baseline's x threshold is a warning (fails only with --strict)")
      ->type_name("PATH");
  bench->add_option("--bench-threshold", cfg.bench_threshold, "regression threshold ratio (default 1.5)")
      ->check(number_check("a ratio above 1", 1.0, false))->type_name("X");
  bench->fallthrough();  // --json/--html/--junit/--summary-md/--isolate/--strict/-q as for runs

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "dlpack-validate: error: %s (see --help)\n", e.what());
    return dlpv::kExitBadInput;
  }

  // A linker that dropped a case file would otherwise shrink the suite silently.
  if (dlpv::Registry::instance().unit_count() != DLPV_CASE_UNITS)
    throw std::runtime_error(fmt::format("{} case files registered, {} built",
                                         dlpv::Registry::instance().unit_count(), DLPV_CASE_UNITS));
  cfg.command_line.assign(argv, argv + argc);
  if (*report) {
    try {
      return dlpv::run_report(cfg, record_path);
    } catch (const dlpv::BadInput& e) {
      std::fprintf(stderr, "dlpack-validate: error: %s\n", e.message.c_str());
      return dlpv::kExitBadInput;
    }
  }
  cfg.bench = bench->parsed();
  cfg.worker_command = {self_exe()};
  cfg.loader = dlpv::load_plugin_subject;
  cfg.preflight = dlpv::preflight_shared_object;
  cfg.kind = "plugin";
  return dlpv::run_app_guarded(cfg, "dlpack-validate");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--internal-worker") == 0)
    return dlpv::worker_main(std::vector<std::string>(argv + 2, argv + argc), dlpv::load_plugin_subject);
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dlpack-validate: internal error: %s\n", e.what());
    return dlpv::kExitInternal;
  }
}
