// validator/main.cpp: the dlpack-validate CLI: its options are the rows of the options table
// (app/include/dlpack_validate/options.hpp), parsed with CLI11; the run itself is dlpv::run_app
// (shared with the Python shim).
// Exit codes: 0 nothing unexpected, 1 unexpected results, 2 bad input, 3 internal error.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/explain.hpp>
#include <dlpack_validate/ids.hpp>
#include <dlpack_validate/options.hpp>
#include <dlpack_validate/plugin_subject.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#ifndef DLPV_CASE_UNITS
#error "DLPV_CASE_UNITS (number of case files) must be defined by the build"
#endif

namespace {

using dlpv::shell_word;

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  buf[n] = 0;
  return buf;
}


/// How to run this program again from the current directory: argv[0] as typed when it leads
/// here from this directory (a path, or a name the shell finds on PATH), else the absolute
/// path of this executable (argv[0] set by whoever started it, a PATH that changed, ...).
std::string invocation(const char* argv0) {
  std::string self;
  try {
    self = self_exe();
  } catch (const std::exception&) {
    return shell_word(argv0 ? argv0 : "dlpack-validate");
  }
  auto same = [&](const std::string& path) {
    char buf[PATH_MAX];
    return realpath(path.c_str(), buf) && self == buf && access(path.c_str(), X_OK) == 0;
  };
  const std::string typed = argv0 ? argv0 : "";
  if (typed.find('/') != std::string::npos) return shell_word(same(typed) ? typed : self);
  if (!typed.empty()) {
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "";
    for (std::size_t start = 0; start <= dirs.size();) {
      std::size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      const std::string dir = dirs.substr(start, end - start);
      const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + typed;
      if (access(candidate.c_str(), X_OK) == 0) return shell_word(same(candidate) ? typed : self);
      start = end + 1;
    }
  }
  return shell_word(self);
}

/// The options of the table on `main` (and bench-only ones on `bench`): flags into `flags`,
/// values into `texts`, each value checked by the table's own check.
void add_table_options(CLI::App& main, CLI::App& bench, std::map<std::string, bool>& flags,
                       std::map<std::string, std::vector<std::string>>& texts) {
  namespace o = dlpv::options;
  for (const o::Spec& s : o::table()) {
    CLI::App& where = s.commands == o::kBench ? bench : main;
    const std::string names = *s.short_flag ? std::string(s.short_flag) + "," + o::flag_of(s) : o::flag_of(s);
    if (s.type == o::Type::flag) {
      where.add_flag(names, flags[s.name], o::help_of(s));
      continue;
    }
    const o::Spec* spec = &s;
    where.add_option(names, texts[s.name], o::help_of(s))
        ->allow_extra_args(false)  // one value per use: a subject after it stays a subject
        ->type_name(s.metavar)
        ->check(CLI::Validator([spec](std::string& text) { return o::check(*spec, text); }, "", ""));
  }
}

int run_cli(int argc, char** argv) {
  CLI::App app{"dlpack-validate: DLPack conformance validator for producer/consumer libraries.\n"
               "Exit codes: 0 nothing unexpected, 1 unexpected fail/crash/timeout/error (or warn\n"
               "with --strict), 2 bad input, 3 internal error.",
               "dlpack-validate"};
  app.footer("Docs (in the repository): README.md; docs/usage.md (options, statuses), docs/plugin.md (writing a\n"
             "plugin), docs/baselines.md, docs/ci.md (CI recipes), docs/run-record.md (the --json record);\n"
             "the case ids: cases/README.md.");
  std::vector<std::string> subjects;
  app.add_option("subjects", subjects, "plugin libraries to validate (LIB.so ...)");
  app.set_version_flag("--version", std::string("dlpack-validate ") + dlpv::kToolVersion);
  std::string record_path;
  CLI::App* report = app.add_subcommand(
      "report", "re-render reports from a saved run record: report RUN.json --html out.html ...");
  report->add_option("record", record_path, "a run record written by --json");
  report->fallthrough();  // the report formats' options (reports::formats()), --baseline, --strict belong to the main app
  std::vector<std::string> merge_inputs;
  std::string merge_output;
  CLI::App* merge = report->add_subcommand(
      "merge", "merge the records of shards (--shard K/N), machines or CI jobs into one record: every case "
               "once, subjects united, conflicts reported (exit 1): report merge A.json B.json ... -o all.json");
  merge->add_option("records", merge_inputs, "run records written by --json")->required();
  merge->add_option("-o,--output", merge_output, "write the merged record to PATH (as --json does)")->type_name("PATH");
  merge->fallthrough();
  std::string diff_old, diff_new;
  CLI::App* diff = app.add_subcommand(
      "diff", "what changed between two run records (regressions, fixes, other status changes, new and "
              "removed cases), as text and with --summary-md as Markdown; exit 1 on a regression and on records of different libraries: diff OLD.json NEW.json");
  diff->add_option("old", diff_old, "the earlier record (e.g. your last release's)")->required();
  diff->add_option("new", diff_new, "the later record (e.g. your main branch's)")->required();
  bool diff_allow_different = false;
  diff->add_flag("--allow-different-subjects", diff_allow_different,
                 "records of different libraries: judge the cases matched by position (two builds that name "
                 "themselves differently) instead of exiting 1 with 'subjects differ'");
  diff->fallthrough();
  std::string explain_id;
  CLI::App* explain = app.add_subcommand(
      "explain", "what a requirement id or a case id means: a requirement's text, strength, source, what a breach "
                 "looks like and the cases that test it; a case's description, requirements and how to run it "
                 "alone: explain CAP-01, explain consumer.byte_offset.versioned");
  explain->add_option("id", explain_id, "a requirement id (CAP-01, any case) or a case id")->required();
  CLI::App* bench = app.add_subcommand(
      "bench", "time each exchange route of the plugins (ns/op: median, p10, p90 over batches; the "
               "harness's own overhead measured and subtracted): bench LIB.so... [--json out.json]");
  bench->add_option("subjects", subjects, "plugin libraries (LIB.so ...)")->required();
  bench->fallthrough();  // the report formats' options, --isolate, --strict, -q as for runs
  std::map<std::string, bool> flags;
  std::map<std::string, std::vector<std::string>> texts;
  add_table_options(app, *bench, flags, texts);

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

  // bench takes the options the table gives to bench (as python -m validator bench does): a run
  // option given to bench (--load-timeout, --exclude, ...) is refused, never silently ignored.
  if (bench->parsed()) {
    namespace o = dlpv::options;
    for (const o::Spec& s : o::table()) {
      if (s.commands & o::kBench) continue;
      const bool given = s.type == o::Type::flag ? flags[s.name] : !texts[s.name].empty();
      if (given) {
        std::fprintf(stderr, "dlpack-validate: error: %s is an option of runs, not of bench (see bench --help)\n",
                     o::flag_of(s).c_str());
        return dlpv::kExitBadInput;
      }
    }
  }

  // A linker that dropped a case file would otherwise shrink the suite silently.
  if (dlpv::Registry::instance().unit_count() != DLPV_CASE_UNITS)
    throw std::runtime_error(fmt::format("{} case files registered, {} built",
                                         dlpv::Registry::instance().unit_count(), DLPV_CASE_UNITS));
  dlpv::options::Values values = texts;
  for (const auto& [name, on] : flags)
    if (on) values[name] = {"1"};
  dlpv::AppConfig cfg;
  try {
    cfg = dlpv::options::config_from(values);
  } catch (const dlpv::BadInput& e) {
    std::fprintf(stderr, "dlpack-validate: error: %s\n", e.message.c_str());
    return dlpv::kExitBadInput;
  }
  cfg.subjects = subjects;
  cfg.command_line.assign(argv, argv + argc);
  cfg.invocation = invocation(argv[0]);
  if (*explain) {
    try {
      return dlpv::run_explain(explain_id, {"plugin", cfg.invocation, dlpv::requirements_doc()});
    } catch (const dlpv::BadInput& e) {
      std::fprintf(stderr, "dlpack-validate: error: %s\n", e.message.c_str());
      return dlpv::kExitBadInput;
    }
  }
  if (*report || *diff) {
    try {
      if (*diff) return dlpv::run_diff(cfg, diff_old, diff_new, diff_allow_different);
      if (*merge) {
        if (!merge_output.empty() && !cfg.report_path("json").empty())
          throw dlpv::BadInput{"report merge: give the output once (-o or --json)"};
        if (!merge_output.empty()) cfg.report_paths["json"] = merge_output;
        if (!record_path.empty()) merge_inputs.insert(merge_inputs.begin(), record_path);
        return dlpv::run_merge(cfg, merge_inputs);
      }
      if (record_path.empty()) throw dlpv::BadInput{"report: no record given (report RUN.json, or report merge A.json B.json ...)"};
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
  dlpv::register_plugin_bench_routes();
  if (argc >= 2 && std::strcmp(argv[1], "--internal-worker") == 0)
    return dlpv::worker_main(std::vector<std::string>(argv + 2, argv + argc), dlpv::load_plugin_subject);
  try {
    return run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dlpack-validate: internal error: %s\n", e.what());
    return dlpv::kExitInternal;
  }
}
