// harness/src/app.cpp: select -> check inputs -> run -> record -> write -> summarise.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/run_record.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

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

std::vector<std::string> output_paths(const AppConfig& cfg) {
  std::vector<std::string> out;
  for (const std::string* p : {&cfg.json_path, &cfg.html_path, &cfg.junit_path,
                               &cfg.summary_md_path, &cfg.write_baseline_path})
    if (!p->empty()) out.push_back(*p);
  return out;
}

reports::Baseline load_baseline_or_bad_input(const std::string& path) {
  try {
    return reports::load_baseline(path);
  } catch (const reports::BadInput& e) {
    throw BadInput{e.what()};
  }
}

/// Judge (baseline) and write every requested artefact, then print the summary.
/// Everything about the inputs that can be wrong, checked before anything runs (bad input
/// fails at once, not after the suite): subjects, output paths, the baseline (returned).
std::optional<reports::Baseline> check_inputs(const AppConfig& cfg) {
  if (cfg.preflight)
    for (const std::string& s : cfg.subjects)
      if (std::string why = cfg.preflight(s); !why.empty()) throw BadInput{why};
  for (const std::string& p : output_paths(cfg)) check_writable(p);
  if (cfg.baseline_path.empty()) return std::nullopt;
  return load_baseline_or_bad_input(cfg.baseline_path);
}

int finish(nlohmann::ordered_json& record, const AppConfig& cfg,
           const std::optional<reports::Baseline>& baseline) {
  if (baseline) reports::apply_baseline(record, *baseline, cfg.baseline_path);
  reports::finalize_summary(record);
  auto render = [&](const std::string& path, auto writer) {
    if (path.empty()) return;
    std::ostringstream text;
    writer(text);
    write_file_atomic(path, text.str());
  };
  render(cfg.json_path, [&](std::ostream& o) {
    o << record.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  });
  render(cfg.html_path, [&](std::ostream& o) { reports::write_html(record, o); });
  render(cfg.junit_path, [&](std::ostream& o) { reports::write_junit(record, o); });
  render(cfg.summary_md_path, [&](std::ostream& o) { reports::write_markdown(record, o); });
  render(cfg.write_baseline_path, [&](std::ostream& o) {
    o << reports::make_baseline(record).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  });
  reports::append_step_summary(record);
  const std::string text = record.contains("bench") ? reports::bench_text(record) : reports::text_summary(record);
  if (cfg.quiet) std::fputs(text.substr(text.rfind("\nverdict:") + 1).c_str(), stdout);
  else std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return record["summary"].value("exit_code", 1);
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
                   {"source", c->source}});
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

int run_app(const AppConfig& cfg) {
  if (!(cfg.timeout_s > 0)) throw BadInput{"--timeout must be a positive number of seconds"};
  const Isolation isolation = parse_isolation(cfg.isolate);
  if (cfg.bench) {
    if (cfg.subjects.empty()) throw BadInput{"bench: no subject given (see --help)"};
    const auto baseline = check_inputs(cfg);
    nlohmann::ordered_json record = bench::run_bench(cfg);
    return finish(record, cfg, baseline);
  }
  std::vector<const CaseInfo*> selected;
  for (const CaseInfo* c : select_cases(cfg.filters))
    if (applies_to(*c, cfg.kind)) selected.push_back(c);
  if (selected.empty()) throw BadInput{"no case matches the given --filter patterns"};

  if (cfg.list && !cfg.json_path.empty()) return list_json(selected, cfg.json_path);
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
  opt.isolation = isolation;
  opt.worker_command = cfg.worker_command;
  opt.loader = cfg.loader;
  opt.subject_kind = cfg.kind;
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
  return finish(record, cfg, baseline);
}

int run_report(const AppConfig& cfg, const std::string& record_path) {
  nlohmann::ordered_json record;
  try {
    record = reports::load_run(record_path);
  } catch (const reports::BadInput& e) {
    throw BadInput{e.what()};
  }
  const auto baseline = check_inputs(cfg);
  if (cfg.strict) record["options"]["strict"] = true;
  return finish(record, cfg, baseline);
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
