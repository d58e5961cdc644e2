// app/src/bench_run.cpp: `bench` from options to a run record: measured in a worker process
// the supervisor watches, like cases (in this process with --isolate=none), compared with
// --bench-baseline, and given the record's summary.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/verdict.hpp>
#include <dlpack_validate/run_record.hpp>
#include <dlpack_validate/runner.hpp>

#include <algorithm>
#include <chrono>
#include <memory>

namespace dlpv {

using nlohmann::ordered_json;
using bench::Settings;
using Clock = std::chrono::steady_clock;

ordered_json run_bench(const AppConfig& cfg) {
  Settings s;
  s.iterations = cfg.bench_iterations;
  s.batches = cfg.bench_batches;
  s.target_batch_ms = cfg.bench_batch_ms;
  // The values were checked against the options table (options::config_from).
  if (!cfg.bench_baseline_path.empty() && !cfg.bench_compare_path.empty())
    throw BadInput{"--compare and --bench-baseline both name an earlier record: give one (--compare prints "
                   "ratios, --bench-baseline also warns past --bench-threshold)"};
  const bool compare_only = cfg.bench_baseline_path.empty() && !cfg.bench_compare_path.empty();
  const std::string& earlier_path = compare_only ? cfg.bench_compare_path : cfg.bench_baseline_path;
  ordered_json baseline;
  if (!earlier_path.empty()) {
    try {
      baseline = verdict::load_bench_baseline(earlier_path);
    } catch (const verdict::BadInput& e) {
      throw BadInput{e.what()};
    }
  }

  RunResult run;
  run.started_at = iso_now();
  const auto t0 = Clock::now();
  ordered_json section;
  const bool in_process = cfg.isolate == "none";
  if (in_process) {
    std::vector<std::unique_ptr<Subject>> owned;
    std::vector<Subject*> subjects;
    try {
      for (size_t i = 0; i < cfg.subjects.size(); ++i) {
        owned.push_back(cfg.loader(cfg.subjects[i], static_cast<int>(i)));
        subjects.push_back(owned.back().get());
        run.subjects.push_back(owned.back()->info());
      }
    } catch (const SubjectLoadError& e) {
      throw BadInput{e.message};
    }
    section = bench::measure(subjects, s);
  } else {
    // In a worker the supervisor watches, as the cases run (a route may be silent for
    // --timeout beyond ten times its expected length; with fixed --iterations its length is
    // unknown: then up to 10 minutes). Loading may take a minute (a Python package's import).
    RunOptions o;
    o.subject_paths = cfg.subjects;
    o.worker_command = cfg.worker_command;
    o.loader = cfg.loader;
    o.subject_kind = cfg.kind;
    o.timeout_s = std::max(cfg.timeout_s, 60.0);
    const double expected_s = s.iterations > 0 ? 60.0 : (s.batches + 2) * s.target_batch_ms / 1000.0;
    try {
      section = ordered_json::parse(bench_in_worker(o, bench::settings_to_json(s).dump(), cfg.timeout_s + 10.0 * expected_s, run));
    } catch (const SubjectLoadError& e) {
      throw BadInput{e.message};
    }
  }
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();

  RecordOptions ro;
  ro.command_line = cfg.command_line;
  ro.invocation = cfg.invocation;
  ro.timeout_s = cfg.timeout_s;
  ro.isolation = in_process ? Isolation::none : Isolation::worker;
  ro.strict = cfg.strict;
  ro.deterministic = cfg.deterministic;
  ordered_json record = make_run_record(run, ro);
  ordered_json bench;
  bench["process"] = in_process ? "in this process (--isolate=none)" : "in a worker process";
  bench["settings"] = bench::settings_to_json(s);
  if (section.contains("error")) bench["error"] = section["error"];
  bench["calibration"] = section.contains("calibration") ? section["calibration"] : ordered_json();
  bench["routes"] = section.contains("routes") ? section["routes"] : ordered_json::array();
  bench["baseline"] = nullptr;
  bench["warnings"] = ordered_json::array();
  record["bench"] = std::move(bench);
  if (!baseline.is_null()) {
    verdict::apply_bench_baseline(record, baseline, earlier_path, cfg.bench_threshold);
    if (compare_only) {  // ratios only: no route is a regression, nothing warns
      ordered_json& b = record["bench"];
      for (auto& r : b["routes"])
        if (r.contains("regression")) r["regression"] = false;
      b["warnings"] = ordered_json::array();
      b["baseline"]["threshold"] = nullptr;
      b["baseline"]["mode"] = "compare";
    }
  }
  verdict::finalize_summary(record);
  return record;
}

}  // namespace dlpv
