// harness/src/app.cpp: select -> check inputs -> run -> record -> write -> summarise.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/run_record.hpp>
#include <dlpack_validate/text_summary.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace dlpv {

namespace {

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

Isolation parse_isolation(const std::string& s) {
  if (s == "worker") return Isolation::worker;
  if (s == "case") return Isolation::per_case;
  if (s == "none") return Isolation::none;
  throw BadInput{fmt::format("--isolate must be worker, case or none (got '{}')", s)};
}

}  // namespace

int run_app(const AppConfig& cfg) {
  if (!(cfg.timeout_s > 0)) throw BadInput{"--timeout must be a positive number of seconds"};
  const Isolation isolation = parse_isolation(cfg.isolate);
  std::vector<const CaseInfo*> selected;
  for (const CaseInfo* c : select_cases(cfg.filters))
    if (applies_to(*c, cfg.kind)) selected.push_back(c);
  if (selected.empty()) throw BadInput{"no case matches the given --filter patterns"};

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
  if (cfg.preflight)
    for (const std::string& s : cfg.subjects) {
      std::string why = cfg.preflight(s);
      if (!why.empty()) throw BadInput{why};
    }
  if (!cfg.json_path.empty()) check_writable(cfg.json_path);

  RunOptions opt;
  opt.subject_paths = cfg.subjects;
  opt.filters = cfg.filters;
  opt.timeout_s = cfg.timeout_s;
  opt.isolation = isolation;
  opt.worker_command = cfg.worker_command;
  opt.loader = cfg.loader;
  RunResult run;
  try {
    run = run_cases(opt, selected);
  } catch (const SubjectLoadError& e) {
    throw BadInput{e.message};
  }

  RecordOptions ro;
  ro.command_line = cfg.command_line;
  ro.filters = cfg.filters;
  ro.timeout_s = cfg.timeout_s;
  ro.isolation = isolation;
  ro.strict = cfg.strict;
  ro.deterministic = cfg.deterministic;
  nlohmann::ordered_json record = make_run_record(run, ro);
  if (!cfg.json_path.empty())
    write_file_atomic(cfg.json_path,
                      record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  const std::string text = text_summary(record);
  if (cfg.quiet) std::fputs(text.substr(text.rfind("\nverdict:") + 1).c_str(), stdout);
  else std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return record["summary"].value("exit_code", 1);
}

int run_app_guarded(const AppConfig& cfg, const char* program) {
  try {
    return run_app(cfg);
  } catch (const BadInput& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.message.c_str());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
    return kExitInternal;
  }
}

}  // namespace dlpv
