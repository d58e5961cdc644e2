// harness/src/supervisor.cpp: the supervisor side of docs/design.md §7. It never loads a subject.
// It plans the run (selection.cpp), forecasts which cases may end their process, asks the worker
// pool (worker_pool.cpp) to run each case where it belongs, confirms timeouts, and accounts for
// every planned case once: a result, or a line in not_run. The conversation with each worker is
// the case exchange's (case_exchange.cpp).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <memory>
#include <set>

#include "case_exchange.hpp"
#include "protocol.hpp"
#include "selection.hpp"
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

/// How many crash-prone cases ahead the spares' subjects are gathered from.
constexpr size_t kProneWindow = 8;

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
  c.role = Role::producer;
  infos.push_back(std::move(c));
  return &infos.back();
}

/// This process's peak resident memory (KiB): VmHWM belongs to the address space, so unlike
/// getrusage's ru_maxrss it does not carry over the peak of whatever process exec'd us.
long own_peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmHWM:" && status >> value) return value;
    status.ignore(4096, '\n');
  }
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  return self.ru_maxrss;
}

std::string stopped_reason(const CaseResult& r) {
  return fmt::format("-x/--exitfirst: the run stopped after the first unexpected result ({} {})", r.info->id,
                     to_string(r.outcome.status));
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

/// The names a run gives its cases: in not_run lists ("id@0->1") and in progress lines
/// ("pair.float32.contiguous.legacy numpy -> torch": the library's first word when no other
/// subject shares it, else its whole name, else the name with its index).
struct Labels {
  const std::vector<SubjectInfo>& subjects;

  std::string not_run(const CaseResult& r) const {
    if (subjects.size() <= 1) return r.info->id;
    return r.peer >= 0 ? fmt::format("{}@{}->{}", r.info->id, r.subject, r.peer)
                       : fmt::format("{}@{}", r.info->id, r.subject);
  }
  std::string progress(const CaseResult& r) const {
    if (subjects.size() <= 1) return r.info->id;
    return r.peer >= 0 ? fmt::format("{} {} -> {}", r.info->id, short_name(r.subject), short_name(r.peer))
                       : fmt::format("{} {}", r.info->id, short_name(r.subject));
  }
  std::string short_name(int i) const {
    if (i < 0 || static_cast<size_t>(i) >= subjects.size()) return fmt::format("#{}", i);
    auto first_word = [](const std::string& n) { return n.substr(0, n.find(' ')); };
    const std::string& full = subjects[static_cast<size_t>(i)].name;
    int same_word = 0, same_name = 0;
    for (const SubjectInfo& s : subjects) {
      same_word += first_word(s.name) == first_word(full);
      same_name += s.name == full;
    }
    if (!full.empty() && same_word == 1) return first_word(full);
    return !full.empty() && same_name == 1 ? full : fmt::format("#{} {}", i, full);
  }
};

/// Which planned cases may end their process (they then run in a side worker): the baseline
/// expects a crash or timeout, or this run saw the same case end a worker (for a pair case: the
/// same case with the same consumer, or any case of the same producer and consumer). And the
/// subjects the spares for the next such cases load.
class CrashForecast {
 public:
  CrashForecast(const RunOptions& options, const RunResult& run, const std::vector<CaseResult>& planned,
                const std::vector<std::string>& skip_reason)
      : options_(options), run_(run), planned_(planned), skip_reason_(skip_reason),
        baseline_death_(planned.size(), -1) {}

  bool prone(size_t k) {
    const CaseResult& r = planned_[k];
    if (options_.isolation != Isolation::worker || !skip_reason_[k].empty()) return false;
    if (died_ids_.count({r.info->id, r.peer}) || (r.peer >= 0 && died_pairs_.count({r.subject, r.peer}))) return true;
    if (baseline_death_[k] < 0) baseline_death_[k] = options_.expect_death && options_.expect_death(run_.subjects, r);
    return baseline_death_[k] == 1;
  }

  void died(const CaseResult& r) {
    died_ids_.insert({r.info->id, r.peer});
    if (r.peer >= 0) died_pairs_.insert({r.subject, r.peer});
  }

  /// The subjects each of the next cases after `k` that will want a fresh worker needs: with
  /// --isolate=case the next cases; else the next crash-prone ones, each spare loading what the
  /// crash-prone cases near it of the same subject need too (the pair cases with the consumers
  /// that crash there), so that one side worker serves them all until one ends it.
  std::vector<std::vector<int>> spare_needs(size_t k) {
    std::vector<std::vector<int>> needs;
    if (options_.isolation == Isolation::per_case) {
      for (size_t j = k + 1; j < planned_.size() && needs.size() < WorkerPool::kSpares; ++j)
        if (skip_reason_[j].empty()) needs.push_back(need_of(j));
      return needs;
    }
    // The next crash-prone cases (kept until passed, or until a death changes the forecast).
    const size_t history = died_ids_.size() + died_pairs_.size();
    if (ahead_.empty() || ahead_.front() <= k || history_ != history) {
      history_ = history;
      ahead_.clear();
      for (size_t j = k + 1; j < planned_.size() && ahead_.size() < kProneWindow; ++j)
        if (prone(j)) ahead_.push_back(j);
      if (ahead_.empty()) ahead_.push_back(planned_.size());  // none ahead
    }
    for (size_t i = 0; i < ahead_.size() && needs.size() < WorkerPool::kSpares; ++i) {
      if (ahead_[i] >= planned_.size()) break;
      std::vector<int> need;
      for (size_t j : ahead_)
        if (j < planned_.size() && planned_[j].subject == planned_[ahead_[i]].subject)
          for (int x : need_of(j))
            if (std::find(need.begin(), need.end(), x) == need.end()) need.push_back(x);
      std::sort(need.begin(), need.end());
      needs.push_back(need);
    }
    return needs;
  }

 private:
  std::vector<int> need_of(size_t k) const { return case_subjects(planned_[k].subject, planned_[k].peer); }

  const RunOptions& options_;
  const RunResult& run_;
  const std::vector<CaseResult>& planned_;
  const std::vector<std::string>& skip_reason_;
  std::vector<signed char> baseline_death_;
  std::set<std::pair<std::string, int>> died_ids_;  ///< (case id, peer; -1 for one-subject cases)
  std::set<std::pair<int, int>> died_pairs_;
  std::vector<size_t> ahead_;
  size_t history_ = 0;
};

/// A case that timed out, run once more alone in a fresh worker with twice the time
/// (docs/design.md §7: a timeout is confirmed before it is reported). `out` holds the first try
/// and becomes the result: the second try's, with the first try noted.
void confirm_timeout(WorkerPool& pool, const RunOptions& options, const CaseResult& r, CaseOutcome& out,
                     WorkerPool::Lane lane) {
  const std::string first = out.message;
  CaseOutcome second;
  if (!pool.run_alone(*r.info, r.subject, r.peer, second, lane, 2 * options.timeout_s))
    return;  // the subject's workers stopped starting: the first try stands
  out = second;
  if (second.status == Status::timeout) {
    out.message += fmt::format(" (reproduced: run again alone in a fresh worker with twice the time, after the "
                               "first try had timed out at {} s)",
                               options.timeout_s);
    out.first_try = first;
  } else {
    out.first_try = fmt::format("the first try timed out ({}); run again alone in a fresh worker with {} s, it "
                                "ended {}",
                                first, 2 * options.timeout_s, to_string(second.status));
  }
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

/// Every planned case through the pool, in order: skips decided here (no worker), crash-prone
/// cases in the side worker, timeouts confirmed, -x and a subject that keeps killing its
/// workers ending the run early (the rest reported once as not run).
void run_planned(WorkerPool& pool, const RunOptions& options, const std::vector<CaseResult>& planned,
                 const Labels& labels, RunResult& run) {
  // The supervisor decides skips itself: a case whose needs the subject's probed capabilities
  // rule out gets its skip here, under every isolation mode, with no worker.
  std::vector<std::string> skip_reason(planned.size());
  for (size_t k = 0; k < planned.size(); ++k)
    skip_reason[k] = missing_need(*planned[k].info, run.subjects[static_cast<size_t>(planned[k].subject)]);
  CrashForecast forecast(options, run, planned, skip_reason);
  NotRun rest;
  std::string stopped;  // -x: the result that ended the run
  for (size_t k = 0; k < planned.size(); ++k) {
    const CaseResult& r = planned[k];
    if (!stopped.empty() || !rest.cases.empty()) {
      rest.cases.push_back(labels.not_run(r));
      continue;
    }
    if (options.progress) options.progress(run.results.size(), planned.size(), labels.progress(r));
    CaseResult done = r;
    if (!skip_reason[k].empty()) {
      done.outcome = skipped_outcome(skip_reason[k]);
    } else {
      pool.upcoming(forecast.spare_needs(k));
      const WorkerPool::Lane lane = forecast.prone(k) ? WorkerPool::Lane::side : WorkerPool::Lane::main;
      if (!pool.run(*r.info, r.subject, r.peer, done.outcome, lane, options.timeout_s)) {
        rest.cases.push_back(labels.not_run(r));
        continue;
      }
      if (done.outcome.status == Status::timeout) confirm_timeout(pool, options, r, done.outcome, lane);
      if (done.outcome.status == Status::crash || done.outcome.status == Status::timeout) forecast.died(r);
    }
    run.results.push_back(std::move(done));
    if (options.stop_after && options.stop_after(run.subjects, run.results.back()))
      stopped = stopped_reason(run.results.back());
  }
  if (!rest.cases.empty()) {
    rest.reason = !stopped.empty() ? stopped : "the subject ends its own process: " + pool.gave_up_reason();
    run.not_run.push_back(std::move(rest));
  }
}

}  // namespace

RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases) {
  RunResult run;
  run.started_at = protocol::iso_now();
  const auto t0 = Clock::now();
  if (options.isolation == Isolation::none) {
    run_in_process(options, cases, run);
  } else {
    WorkerPool pool(options, run);
    CaseOutcome load_failure;
    // Load once up front so a clean load error is bad input before any case runs.
    const bool loaded = load_subjects(pool, options, run, load_failure);
    const std::vector<CaseResult> planned = plan(cases, run.subjects);
    const Labels labels{run.subjects};
    if (loaded)
      run_planned(pool, options, planned, labels, run);
    else
      report_load_failure(pool, load_failure, planned, labels, run);
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
