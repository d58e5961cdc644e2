// harness/src/lanes.cpp: the lanes of a run (lanes.hpp): the queue, one thread and worker pool
// per lane, the crash forecast that sends crash-prone cases to side workers, and the gathering
// of the lanes' records into the run's, in the plan's order.
// SPDX-License-Identifier: Apache-2.0
#include "lanes.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "case_exchange.hpp"
#include "confirmer.hpp"
#include "protocol.hpp"
#include "selection.hpp"

namespace dlpv::lanes {

std::string stopped_reason(const CaseResult& r) {
  return fmt::format("-x/--exitfirst: the run stopped after the first unexpected result ({} {})", r.info->id,
                     to_string(r.outcome.status));
}

namespace {

using supervision::Confirmer;  // confirmer.hpp

/// How many crash-prone cases ahead the spares' subjects are gathered from.
constexpr size_t kProneWindow = 8;

/// Which planned cases may end their process (they then run in a side worker): the baseline
/// expects a crash or timeout, or this lane saw the same case end a worker (for a pair case: the
/// same case with the same consumer, or any case of the same producer and consumer). And the
/// subjects the spares for the next such cases load. Positions are places in the lanes' queue
/// (`order`: planned indices); a lane looks ahead within the stretch of the queue it has taken.
class CrashForecast {
 public:
  CrashForecast(const RunOptions& options, const RunResult& run, const std::vector<CaseResult>& planned,
                const std::vector<std::string>& skip_reason, const std::vector<size_t>& order,
                std::mutex& callbacks)
      : options_(options), run_(run), planned_(planned), skip_reason_(skip_reason), order_(order),
        callbacks_(callbacks), baseline_death_(planned.size(), -1) {}

  bool prone(size_t pos) {
    const size_t k = order_[pos];
    const CaseResult& r = planned_[k];
    if (options_.isolation != Isolation::worker || !skip_reason_[k].empty()) return false;
    if (died_ids_.count({r.info->id, r.peer}) || (r.peer >= 0 && died_pairs_.count({r.subject, r.peer}))) return true;
    if (baseline_death_[k] < 0) {
      std::lock_guard<std::mutex> lock(callbacks_);
      baseline_death_[k] = options_.expect_death && options_.expect_death(run_.subjects, r);
    }
    return baseline_death_[k] == 1;
  }

  void died(const CaseResult& r) {
    died_ids_.insert({r.info->id, r.peer});
    if (r.peer >= 0) died_pairs_.insert({r.subject, r.peer});
  }

  /// The subjects each of the cases after position `pos` (before `end`) that will want a fresh
  /// worker needs: with --isolate=case the next cases; else the next crash-prone ones, each
  /// spare loading what the crash-prone cases near it of the same subject need too (the pair
  /// cases with the consumers that crash there), so that one side worker serves them all until
  /// one ends it.
  std::vector<std::vector<int>> spare_needs(size_t pos, size_t end) {
    std::vector<std::vector<int>> needs;
    if (options_.isolation == Isolation::per_case) {
      for (size_t j = pos + 1; j < end && needs.size() < WorkerPool::kSpares; ++j)
        if (skip_reason_[order_[j]].empty()) needs.push_back(need_of(j));
      return needs;
    }
    // The next crash-prone cases (kept until passed, or until a death changes the forecast).
    const size_t history = died_ids_.size() + died_pairs_.size();
    if (ahead_.empty() || ahead_.front() <= pos || history_ != history || end_ != end) {
      history_ = history;
      end_ = end;
      ahead_.clear();
      for (size_t j = pos + 1; j < end && ahead_.size() < kProneWindow; ++j)
        if (prone(j)) ahead_.push_back(j);
      if (ahead_.empty()) ahead_.push_back(end);  // none ahead
    }
    for (size_t i = 0; i < ahead_.size() && needs.size() < WorkerPool::kSpares; ++i) {
      if (ahead_[i] >= end) break;
      std::vector<int> need;
      for (size_t j : ahead_)
        if (j < end && planned_[order_[j]].subject == planned_[order_[ahead_[i]]].subject)
          for (int x : need_of(j))
            if (std::find(need.begin(), need.end(), x) == need.end()) need.push_back(x);
      std::sort(need.begin(), need.end());
      needs.push_back(need);
    }
    return needs;
  }

 private:
  std::vector<int> need_of(size_t pos) const {
    const CaseResult& r = planned_[order_[pos]];
    return case_subjects(r.subject, r.peer);
  }

  const RunOptions& options_;
  const RunResult& run_;
  const std::vector<CaseResult>& planned_;
  const std::vector<std::string>& skip_reason_;
  const std::vector<size_t>& order_;
  std::mutex& callbacks_;
  std::vector<signed char> baseline_death_;
  std::set<std::pair<std::string, int>> died_ids_;  ///< (case id, peer; -1 for one-subject cases)
  std::set<std::pair<int, int>> died_pairs_;
  std::vector<size_t> ahead_;
  size_t history_ = 0, end_ = 0;
};

/// The cores this process may use.
int cores_available() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}


/// Memory the system can still give (KiB, /proc/meminfo MemAvailable; 0 where unreadable).
long available_kib() { return proc_value("/proc/meminfo", "MemAvailable:"); }

/// What the lanes of a run share: the queue of planned cases (`order`: planned indices, in the
/// order the lanes take them), its next place, -x, progress and the callbacks.
struct Queue {
  Queue(const RunOptions& o, const std::vector<CaseResult>& p, const std::vector<std::string>& skips,
        const std::vector<size_t>& ord, const Labels& l, const RunResult& r, size_t n)
      : options(o), planned(p), skip_reason(skips), order(ord), labels(l), run(r), lanes(n) {}
  const RunOptions& options;
  const std::vector<CaseResult>& planned;
  const std::vector<std::string>& skip_reason;
  const std::vector<size_t>& order;
  const Labels& labels;
  const RunResult& run;  ///< the subjects (read only while lanes run)
  size_t lanes = 1;
  std::mutex m;          ///< the fields below, progress and stop_after
  std::mutex callbacks;  ///< expect_death
  size_t next = 0;
  size_t done = 0;
  std::string stopped;  ///< -x: the result that ended the run
  std::string gave_up;  ///< a subject that keeps killing its workers

  /// The next stretch of the queue for a lane: [begin, end), empty when it is done or stopped.
  /// One lane takes it all; several take short stretches (at most 8 cases), so that a lane
  /// held up by hangs leaves the rest to the others.
  std::pair<size_t, size_t> take() {
    std::lock_guard<std::mutex> lock(m);
    if (!stopped.empty() || !gave_up.empty() || next >= order.size()) return {order.size(), order.size()};
    const size_t left = order.size() - next;
    const size_t n = lanes == 1 ? left : std::clamp<size_t>(left / (4 * lanes), 1, 8);
    const size_t begin = next;
    next += n;
    return {begin, next};
  }
  bool halted() {
    std::lock_guard<std::mutex> lock(m);
    return !stopped.empty() || !gave_up.empty();
  }
};

/// One lane's record: its results, incidents and figures in `shard`; `at[i]` is the planned
/// index of shard.results[i], and `incident_at[j]` that of the case the lane was at when
/// incident j came.
struct LaneRecord {
  RunResult shard;
  std::vector<size_t> at;
  std::vector<size_t> incident_at;
};

/// One lane: a worker pool of its own taking stretches of the queue.
void run_lane(WorkerPool& pool, Queue& q, LaneRecord& lane, PaceMeter& pace, Confirmer& confirmer) {
  CrashForecast forecast(q.options, q.run, q.planned, q.skip_reason, q.order, q.callbacks);
  auto note_incidents = [&](size_t k) {
    while (lane.incident_at.size() < lane.shard.incidents.size()) lane.incident_at.push_back(k);
  };
  for (auto [begin, end] = q.take(); begin < end; std::tie(begin, end) = q.take()) {
    for (size_t pos = begin; pos < end; ++pos) {
      if (q.halted()) return;
      const size_t k = q.order[pos];
      const CaseResult& r = q.planned[k];
      if (q.options.progress) {
        std::lock_guard<std::mutex> lock(q.m);
        q.options.progress(q.done, q.planned.size(), q.labels.progress(r));
      }
      CaseResult done = r;
      if (!q.skip_reason[k].empty()) {
        done.outcome = skipped_outcome(q.skip_reason[k]);
      } else {
        // Spares look past the stretch (up to kProneWindow cases ahead): the cases there are
        // likely this lane's next, and a spare another lane's case made needless is ended unused.
        pool.upcoming(forecast.spare_needs(pos, std::min(q.order.size(), end + (q.lanes > 1 ? kProneWindow : 0))));
        const WorkerPool::Lane where = forecast.prone(pos) ? WorkerPool::Lane::side : WorkerPool::Lane::main;
        const double p = pace.pace(r.subject);
        const bool ran = pool.run(*r.info, r.subject, r.peer, done.outcome, where, q.options.timeout_s, p);
        note_incidents(k);
        if (!ran) {
          std::lock_guard<std::mutex> lock(q.m);
          if (q.gave_up.empty()) q.gave_up = "the subject ends its own process: " + pool.gave_up_reason();
          return;
        }
        if (done.outcome.status == Status::crash || done.outcome.status == Status::timeout) forecast.died(r);
        if (done.outcome.status == Status::timeout)
          confirmer.submit(k, r, done.outcome, p, static_cast<bool>(q.options.stop_after));
      }
      lane.at.push_back(k);
      lane.shard.results.push_back(std::move(done));
      std::lock_guard<std::mutex> lock(q.m);
      ++q.done;
      if (q.options.stop_after && q.stopped.empty() && q.options.stop_after(q.run.subjects, lane.shard.results.back()))
        q.stopped = stopped_reason(lane.shard.results.back());
    }
  }
}

/// How many lanes: --jobs (0: the cores), no more than the cases make worth a worker of their
/// own (one per 8 cases to run), nor than the memory available holds (each lane may hold a main
/// and a side worker the size of the first one, with every subject loaded; half the memory
/// available is given to workers). lanes_why says when the memory lowered it.
size_t lane_count(const RunOptions& options, size_t runnable, long worker_kib, RunResult& run) {
  const int asked = jobs_asked(options);
  run.jobs = asked;
  if (options.isolation == Isolation::none) return 1;
  // -x stops at the first unexpected result in the plan's order: one lane runs the plan in order.
  if (options.stop_after) return 1;
  size_t n = std::min(static_cast<size_t>(asked), std::max<size_t>(1, (runnable + 7) / 8));
  const long avail = available_kib();
  if (worker_kib > 0 && avail > 0) {
    const size_t fit = static_cast<size_t>(std::max<long>(1, avail / 2 / (2 * worker_kib)));
    if (fit < n) {
      n = fit;
      run.lanes_why = fmt::format("--jobs {}: {} lane{} used: each lane may hold two workers of {} MiB (the first "
                                  "worker, every subject loaded), and half of the {} MiB available goes to workers",
                                  asked, n, n == 1 ? "" : "s", worker_kib >> 10, avail >> 10);
    }
  }
  return n;
}

/// The lanes' queue: one lane takes the plan in order. Several take it by the highest subject
/// each case needs (then the lowest): a lane's main worker loads the subjects up to that
/// highest one, in command-line order, so it only ever adds to what it has (never a restart to
/// load a subject before one it holds).
std::vector<size_t> queue_order(const std::vector<CaseResult>& planned, size_t lanes) {
  std::vector<size_t> order(planned.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  if (lanes > 1)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      // (highest, lowest) of the case's subjects: case_subjects' last and first
      auto span = [&](const CaseResult& r) {
        const int p = r.peer >= 0 ? r.peer : r.subject;
        return std::make_pair(std::max(r.subject, p), std::min(r.subject, p));
      };
      return span(planned[a]) < span(planned[b]);
    });
  return order;
}

/// Run the lanes, each in a thread of its own (lane 0 in this one, with the first worker; the
/// workers started ahead become the other lanes' spare main workers). A lane's workers are
/// ended by the thread that started them: a worker dies with the thread that spawned it
/// (PR_SET_PDEATHSIG follows the thread, not the process). What a lane throws (a worker that
/// cannot be spawned; a subject that now fails to load cleanly: bad input) stops the other
/// lanes and is thrown here, the first lane's first.
void run_lanes(WorkerPool& first, std::vector<std::unique_ptr<WorkerProcess>>& ahead, Queue& q,
               std::vector<LaneRecord>& lane, PaceMeter& pace, Confirmer& confirmer) {
  const size_t lanes = lane.size();
  std::vector<std::unique_ptr<WorkerPool>> pools;
  for (size_t i = 0; i < lanes; ++i) {
    lane[i].shard.subjects = q.run.subjects;
    lane[i].shard.left_out_steps = q.run.left_out_steps;
    pools.push_back(std::make_unique<WorkerPool>(q.options, lane[i].shard, &pace, lanes > 1));
  }
  pools[0]->adopt_main(first);
  for (size_t i = 1; i < lanes && i - 1 < ahead.size(); ++i) pools[i]->give_main_spare(std::move(ahead[i - 1]));
  std::vector<std::exception_ptr> thrown(lanes);
  auto serve = [&](size_t i) {
    try {
      run_lane(*pools[i], q, lane[i], pace, confirmer);
    } catch (...) {
      thrown[i] = std::current_exception();
      std::lock_guard<std::mutex> lock(q.m);
      if (q.gave_up.empty()) q.gave_up = "a lane stopped";
    }
    try {
      pools[i]->finish();
    } catch (...) {
      if (!thrown[i]) thrown[i] = std::current_exception();
    }
    while (lane[i].incident_at.size() < lane[i].shard.incidents.size()) lane[i].incident_at.push_back(q.planned.size());
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < lanes; ++i) threads.emplace_back(serve, i);
  serve(0);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : thrown)
    if (e) std::rethrow_exception(e);
}

/// The lanes' records into the run's: the results in the plan's order (a confirmed timeout's
/// second try in place of its first); the incidents by the case they came before (lane by lane
/// where two came at the same case, confirmations last); the figures summed; what was not run,
/// once.
void gather(std::vector<LaneRecord>& lane, Confirmer& confirmer, const Queue& q, RunResult& run) {
  std::vector<std::optional<CaseResult>> by_plan(q.planned.size());
  std::vector<std::tuple<size_t, size_t, Incident>> incidents;
  auto absorb = [&](RunResult& shard, size_t tie, const std::vector<size_t>& incident_at) {
    for (size_t j = 0; j < shard.incidents.size(); ++j)
      incidents.emplace_back(incident_at[j], tie, std::move(shard.incidents[j]));
    run.workers_started += shard.workers_started;
    run.spares_unused += shard.spares_unused;
    run.load_wait_s += shard.load_wait_s;
  };
  for (size_t i = 0; i < lane.size(); ++i) {
    for (size_t j = 0; j < lane[i].shard.results.size(); ++j)
      by_plan[lane[i].at[j]] = std::move(lane[i].shard.results[j]);
    absorb(lane[i].shard, i, lane[i].incident_at);
  }
  confirmer.each([&](size_t k, CaseOutcome& out, RunResult& shard, bool known) {
    if (by_plan[k]) {
      out.duration_s = by_plan[k]->outcome.duration_s;
      if (out.output_tail.empty()) out.output_tail = by_plan[k]->outcome.output_tail;
      by_plan[k]->outcome = std::move(out);
    }
    known ? ++run.hangs_known : ++run.confirmations;
    absorb(shard, lane.size(), std::vector<size_t>(shard.incidents.size(), k));
  });
  std::stable_sort(incidents.begin(), incidents.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (auto& inc : incidents) run.incidents.push_back(std::move(std::get<2>(inc)));
  NotRun rest;
  for (size_t k = 0; k < q.planned.size(); ++k) {
    if (by_plan[k])
      run.results.push_back(std::move(*by_plan[k]));
    else
      rest.cases.push_back(q.labels.not_run(q.planned[k]));
  }
  if (!rest.cases.empty()) {
    rest.reason = !q.stopped.empty() ? q.stopped : q.gave_up;
    run.not_run.push_back(std::move(rest));
  }
}

}  // namespace

int jobs_asked(const RunOptions& options) { return options.jobs > 0 ? options.jobs : cores_available(); }

/// Every planned case through the lanes: skips decided here (no worker), crash-prone cases in
/// side workers, timeouts confirmed alongside, -x and a subject that keeps killing its workers
/// ending the run early (the rest reported once as not run). The report's order is the plan's,
/// whatever the lanes did.
void run_planned(WorkerPool& first, const RunOptions& options, const std::vector<CaseResult>& planned,
                 const Labels& labels, RunResult& run, std::vector<std::unique_ptr<WorkerProcess>>& ahead) {
  // The supervisor decides skips itself: a case whose needs the subject's probed capabilities
  // rule out gets its skip here, under every isolation mode, with no worker.
  std::vector<std::string> skip_reason(planned.size());
  size_t runnable = 0;
  for (size_t k = 0; k < planned.size(); ++k) {
    skip_reason[k] = missing_need(*planned[k].info, run.subjects[static_cast<size_t>(planned[k].subject)]);
    runnable += skip_reason[k].empty();
  }
  const size_t lanes = lane_count(options, runnable, first.main_rss_kib(), run);
  run.lanes = static_cast<int>(lanes);
  const std::vector<size_t> order = queue_order(planned, lanes);
  Queue q(options, planned, skip_reason, order, labels, run, lanes);
  PaceMeter pace(run.subjects.size());
  first.set_pace(&pace);
  Confirmer confirmer(options, run, pace, static_cast<int>(lanes));
  std::vector<LaneRecord> lane(lanes);
  run_lanes(first, ahead, q, lane, pace, confirmer);
  gather(lane, confirmer, q, run);
}

}  // namespace dlpv::lanes
