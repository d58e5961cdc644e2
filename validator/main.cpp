// validator/main.cpp: the dlpack-validate CLI. Parses, selects, hands over to the runner,
// writes the record and prints the summary; no DLPack logic lives here.
// Exit codes: 0 nothing unexpected, 1 unexpected results, 2 bad input, 3 internal error.
// SPDX-License-Identifier: Apache-2.0
#include <CLI/CLI.hpp>
#include <dlpack_validate/run_record.hpp>
#include <dlpack_validate/runner.hpp>
#include <dlpack_validate/text_summary.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>

#ifndef DLPV_CASE_UNITS
#error "DLPV_CASE_UNITS (number of case files) must be defined by the build"
#endif

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

struct BadInput {
  std::string message;
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot resolve /proc/self/exe");
  buf[n] = 0;
  return buf;
}

/// Write a file atomically (temp file + rename) so no half-written report is ever left.
void write_file_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw BadInput{fmt::format("cannot write '{}': {}", path, std::strerror(errno))};
    f << text;
    if (!f.flush()) throw BadInput{fmt::format("cannot write '{}'", path)};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw BadInput{fmt::format("cannot write '{}': {}", path, std::strerror(errno))};
  }
}

/// Fail before the run, not after it, when a report path cannot be written.
void check_writable(const std::string& path) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw BadInput{fmt::format("cannot write '{}': {}", path, std::strerror(errno))};
  std::fclose(f);
  std::remove(tmp.c_str());
}

int run_cli(int argc, char** argv) {
  CLI::App app{"dlpack-validate: DLPack conformance validator for producer/consumer libraries.\n"
               "Exit codes: 0 nothing unexpected, 1 unexpected fail/crash/timeout/error (or warn\n"
               "with --strict), 2 bad input, 3 internal error.",
               "dlpack-validate"};
  std::vector<std::string> subjects, filters;
  std::string json_path, isolate = "worker";
  double timeout_s = 10.0;
  bool list = false, strict = false, deterministic = false, quiet = false;
  app.add_option("subjects", subjects, "plugin libraries to validate (LIB.so ...)");
  app.add_flag("--list", list, "list the selected cases and exit");
  app.add_option("--filter", filters, "run only cases whose id matches GLOB (repeatable)")
      ->type_name("GLOB");
  app.add_option("--json", json_path, "write the canonical JSON run record to PATH")->type_name("PATH");
  app.add_option("--timeout", timeout_s, "per-case time limit in seconds (default 10)")
      ->check(CLI::PositiveNumber)->type_name("S");
  app.add_option("--isolate", isolate, "worker (reused worker process, default), case (one "
                 "process per case) or none (in-process, for debugging)")
      ->check(CLI::IsMember({"worker", "case", "none"}));
  app.add_flag("--strict", strict, "warnings and unexpected passes count as failures");
  app.add_flag("--deterministic", deterministic,
               "omit timestamps, durations and host names from the record (golden files)");
  app.add_flag("-q,--quiet", quiet, "print only the verdict line");
  app.set_version_flag("--version", std::string("dlpack-validate ") + dlpv::kToolVersion);

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
    return kExitBadInput;
  }

  // A linker that dropped a case file would otherwise shrink the suite silently.
  auto& registry = dlpv::Registry::instance();
  if (registry.unit_count() != DLPV_CASE_UNITS)
    throw std::runtime_error(fmt::format("{} case files registered, {} built", registry.unit_count(),
                                         DLPV_CASE_UNITS));
  const auto selected = dlpv::select_cases(filters);
  if (selected.empty()) throw BadInput{"no case matches the given --filter patterns"};

  if (list) {
    for (const dlpv::CaseInfo* c : selected) {
      std::string reqs;
      for (const auto& r : c->requirements) reqs += (reqs.empty() ? "" : ",") + r;
      std::printf("%-58s %-7s %-24s %s\n", c->id.c_str(), dlpv::to_string(c->severity),
                  reqs.c_str(), c->title.c_str());
    }
    return 0;
  }
  if (subjects.empty()) throw BadInput{"no subject given: dlpack-validate [options] LIB.so... (see --help)"};
  for (const std::string& s : subjects) {
    std::string why = dlpv::preflight_shared_object(s);
    if (!why.empty()) throw BadInput{why};
  }
  if (!json_path.empty()) check_writable(json_path);

  dlpv::RunOptions opt;
  opt.subject_paths = subjects;
  opt.filters = filters;
  opt.timeout_s = timeout_s;
  opt.isolation = isolate == "case" ? dlpv::Isolation::per_case
                  : isolate == "none" ? dlpv::Isolation::none : dlpv::Isolation::worker;
  opt.self_exe = self_exe();
  dlpv::RunResult run;
  try {
    run = dlpv::run_cases(opt, selected);
  } catch (const dlpv::SubjectLoadError& e) {
    throw BadInput{e.message};
  }

  dlpv::RecordOptions ro;
  ro.command_line.assign(argv, argv + argc);
  ro.filters = filters;
  ro.timeout_s = timeout_s;
  ro.isolation = opt.isolation;
  ro.strict = strict;
  ro.deterministic = deterministic;
  nlohmann::ordered_json record = dlpv::make_run_record(run, ro);
  if (!json_path.empty())
    write_file_atomic(json_path, record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  const std::string text = dlpv::text_summary(record);
  if (quiet) std::fputs(text.substr(text.rfind("\nverdict:") + 1).c_str(), stdout);
  else std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return record["summary"].value("exit_code", 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--internal-worker") == 0) return dlpv::worker_main(argc, argv);
  try {
    return run_cli(argc, argv);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "dlpack-validate: error: %s\n", e.message.c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dlpack-validate: internal error: %s\n", e.what());
    return kExitInternal;
  }
}
