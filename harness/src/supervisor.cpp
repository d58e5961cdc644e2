// harness/src/supervisor.cpp: the supervisor side of docs/design.md §7. Under worker and
// per-case isolation it never loads a subject (with --isolate=none, run_in_process runs every
// case in this process, and says so in the record). It plans the run (selection.cpp), has the
// first worker load the subjects (a load that fails is a result, and the planned cases one
// not_run line), and hands the plan to the lanes (lanes.cpp: the queue, the crash forecast,
// one worker pool per lane, timeouts confirmed beside them by the confirmer, confirmer.hpp),
// which account for every planned case once. The conversation with each worker is the case
// exchange's (case_exchange.cpp).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>
#include <sys/resource.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "case_exchange.hpp"
#include "confirmer.hpp"
#include "protocol.hpp"
#include "selection.hpp"
#include "lanes.hpp"
#include "worker_pool.hpp"

namespace dlpv {

const char* to_string(Isolation i) {
  switch (i) {
    case Isolation::worker: return "worker";
    case Isolation::per_case: return "case";
    case Isolation::none: return "none";
  }
  return "worker";
}

namespace {

using Clock = std::chrono::steady_clock;

/// A one-subject run of at least this many cases starts its other lanes' workers with the first.
constexpr size_t kAheadCases = 64;

using lanes::Labels;
using lanes::stopped_reason;

/// The one result a subject that cannot be loaded gets (not a registered case: it names the
/// load step and the requirement a death there breaks). Stable storage for the run record.
const CaseInfo* load_case(const std::string& step) {
  static std::deque<CaseInfo> infos;
  const std::vector<std::string> reqs = exchange::step_requirements(step);
  for (const CaseInfo& c : infos)
    if (c.requirements == reqs) return &c;
  CaseInfo c;
  c.id = "subject.load";
  c.title = "The subject loads, and its first capsule is made and dropped, without ending the process";
  c.requirements = reqs;
  c.severity = Severity::must;
  c.role = step.rfind("load_check.consumer", 0) == 0 ? Role::consumer : Role::producer;
  infos.push_back(std::move(c));
  return &infos.back();
}

/// This process's peak resident memory (KiB): VmHWM belongs to the address space, so unlike
/// getrusage's ru_maxrss it does not carry over the peak of whatever process exec'd us.
long own_peak_rss_kib() {
  if (const long hwm = proc_value("/proc/self/status", "VmHWM:")) return hwm;
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

/// --isolate=none: every subject loaded here, every case run in this process.
void run_in_process(const RunOptions& options, const std::vector<const CaseInfo*>& cases, RunResult& run) {
  set_case_time_limit_s(options.timeout_s);
  std::vector<std::unique_ptr<Subject>> subjects;
  for (size_t i = 0; i < options.subject_paths.size(); ++i) {
    subjects.push_back(options.loader(options.subject_paths[i], static_cast<int>(i)));
    run.subjects.push_back(subjects.back()->info());
  }
  const std::vector<CaseResult> planned = plan(cases, run.subjects);
  NotRun rest;  // -x: what the run did not reach
  for (const CaseResult& r : planned) {
    if (!rest.reason.empty()) {
      rest.cases.push_back(r.info->id);
      continue;
    }
    if (options.progress) options.progress(run.results.size(), planned.size(), r.info->id);
    CaseResult done = r;
    done.outcome = run_case_in_process(*r.info, *subjects[static_cast<size_t>(r.subject)], {},
                                       r.peer >= 0 ? subjects[static_cast<size_t>(r.peer)].get() : nullptr);
    run.results.push_back(std::move(done));
    if (options.stop_after && options.stop_after(run.subjects, run.results.back()))
      rest.reason = stopped_reason(run.results.back());
  }
  if (!rest.cases.empty()) run.not_run.push_back(std::move(rest));
}

/// The first worker loads every subject. A single death or hang there (a signal from outside,
/// the OOM killer) is an incident, and a second worker tries; two are the subject's verdict.
bool load_subjects(WorkerPool& pool, const RunOptions& options, RunResult& run, CaseOutcome& failure) {
  bool loaded = pool.start_first(failure);
  if (!loaded && failure.status != Status::error) {
    Incident first{failure.status == Status::timeout ? "unresponsive" : "died",
                   "the first worker could not load the subjects (" + failure.message + "); a second worker loaded them",
                   failure.signal, "", pool.failed_load().subject, failure.output_tail};
    loaded = pool.start_first(failure);
    if (loaded) run.incidents.push_back(std::move(first));
  }
  // Dying twice at an optional load check (one that only decides a fact: ONNX Runtime 1.21 to 1.30
  // die when handed a versioned capsule they did not ask for) is that check's result, kept once;
  // the workers leave the check out from then on and the release's cases run.
  std::set<std::string> left_out;
  while (!loaded && failure.status != Status::error && exchange::step_is_optional(pool.failed_load().step) &&
         left_out.insert(pool.failed_load().step).second) {
    const exchange::LoadStep at = pool.failed_load();
    CaseOutcome kept = failure;
    kept.message += "; the run goes on with this load check left out (every worker skips it; the cases that need "
                    "the fact it decides are skipped, saying so)";
    run.results.push_back({load_case(at.step), std::max(at.subject, 0), -1, kept});
    pool.skip_load_step(at.step);
    loaded = pool.start_first(failure);
  }
  if (!loaded && run.subjects.empty()) {
    for (size_t i = 0; i < options.subject_paths.size(); ++i) {
      SubjectInfo info;
      info.index = static_cast<int>(i);
      info.kind = options.subject_kind;
      info.path = options.subject_paths[i];
      info.name = "(not loaded)";
      info.notes.push_back(failure.message);
      run.subjects.push_back(info);
    }
  }
  return loaded;
}

/// One result for a load that failed, naming its step and the requirement a death there
/// breaks; the planned cases, never run, once.
void report_load_failure(const WorkerPool& pool, const CaseOutcome& failure, const std::vector<CaseResult>& planned,
                         const Labels& labels, RunResult& run) {
  const int failed = std::max(pool.failed_load().subject, 0);
  run.results.push_back({load_case(pool.failed_load().step), failed, -1, failure});
  NotRun nr;
  nr.reason = fmt::format("the subject{} {} at load ({})", run.subjects.size() > 1 ? fmt::format(" {}", failed) : "",
                          failure.status == Status::timeout ? "hangs"
                          : failure.status == Status::error ? "breaks the worker protocol"
                                                            : "crashes",
                          failure.message);
  for (const CaseResult& r : planned) nr.cases.push_back(labels.not_run(r));
  if (!nr.cases.empty()) run.not_run.push_back(std::move(nr));
}

}  // namespace

RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases) {
  RunResult run;
  run.started_at = protocol::iso_now();
  const auto t0 = Clock::now();
  if (options.isolation == Isolation::none) {
    run.jobs = 1;
    run_in_process(options, cases, run);
  } else {
    WorkerPool pool(options, run);
    CaseOutcome load_failure;
    // A run of one subject and many cases starts the other lanes' main workers at once, loading
    // beside the first one (the lanes are settled after its hello; one not needed is ended).
    std::vector<std::unique_ptr<WorkerProcess>> ahead;
    const int asked = lanes::jobs_asked(options);
    if (options.isolation == Isolation::worker && options.subject_paths.size() == 1 && asked > 1 && !options.stop_after &&
        cases.size() >= kAheadCases)
      ahead = pool.start_ahead(static_cast<size_t>(std::min<size_t>(asked, (cases.size() + 7) / 8)) - 1);
    // Load once up front so a clean load error is bad input before any case runs.
    const bool loaded = load_subjects(pool, options, run, load_failure);
    // Workers started ahead before an optional load check was left out would die at it again.
    if (pool.leaves_out_steps()) ahead.clear();
    const std::vector<CaseResult> planned = plan(cases, run.subjects);
    const Labels labels{run.subjects};
    if (loaded)
      lanes::run_planned(pool, options, planned, labels, run, ahead);
    else
      report_load_failure(pool, load_failure, planned, labels, run);
    for (auto& w : ahead)
      if (w) ++run.spares_unused;
    ahead.clear();
    pool.finish();
  }
  if (options.progress) options.progress(run.results.size(), run.results.size(), "");
  run.supervisor_max_rss_kib = own_peak_rss_kib();
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return run;
}

std::string bench_in_worker(const RunOptions& options, const std::string& settings_json, double route_timeout_s,
                            RunResult& run) {
  WorkerPool pool(options, run);
  std::string section = pool.bench(settings_json, route_timeout_s);
  pool.finish();
  run.supervisor_max_rss_kib = own_peak_rss_kib();
  return section;
}

}  // namespace dlpv
