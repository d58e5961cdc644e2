// harness/src/worker_pool.hpp: which worker runs a case (docs/protocol.md, "Which worker runs
// a case"). The pool owns every worker of a run: the main worker (every subject loaded), the
// side worker (crash-prone cases), the spares started ahead of the cases that will want a fresh
// process, and the workers told to stop. It starts, adopts, replaces and retires them, records
// incidents (a worker lost with no case in flight), and leaves each conversation with a worker
// to the case exchange (case_exchange.hpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>

#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "case_exchange.hpp"
#include "worker_process.hpp"

namespace dlpv {

/// How fast each subject runs on this machine now (docs/design.md §7: a slow environment is
/// never charged to a requirement). A worker's main thread is either on a core, waiting for one
/// (runnable, every core busy), or blocked; the pace is (on core + waiting) / on core, over the
/// subject's recent clean cases (its loads until those add up to enough). A quiet machine
/// measures about 1; three runnable processes per core about 3. A case's time limit is --timeout
/// times its subject's pace, so the limit follows the load, and a hang (blocked, or spinning on
/// a core of its own) still ends at its limit. Shared by every lane of a run.
class PaceMeter {
 public:
  explicit PaceMeter(size_t subjects) : cases_(subjects), loads_(subjects) {}
  void loaded(const std::vector<int>& subjects, double on_cpu_s, double waiting_s);
  void ran(int subject, double on_cpu_s, double waiting_s);
  /// At least 1 (below kSlow: 1), at most kMaxPace, to the nearest tenth.
  double pace(int subject) const;

  /// Below this the machine counts as quiet (the limit stays --timeout).
  static constexpr double kSlow = 1.3;
  static constexpr double kMaxPace = 5.0;
  /// Time on a core a figure rests on before it is believed (seconds).
  static constexpr double kEvidenceS = 0.05;
  /// Past this much time on a core the sums are halved, so the pace follows the machine's load.
  static constexpr double kWindowS = 2.0;

 private:
  struct Sums {
    double cpu = 0, wait = 0;
  };
  static void add(Sums& s, double cpu, double wait);
  mutable std::mutex m_;
  std::vector<Sums> cases_, loads_;
};

/// A case's time limit: `case_s` (--timeout, or twice it) times the subject's pace, to the tenth.
inline double paced_s(double case_s, double pace) { return std::round(case_s * pace * 10) / 10; }

class WorkerPool {
 public:
  /// Where a case runs: the main worker, or the side worker (a case predicted to end its
  /// process, so that the main worker, with every subject loaded, survives it).
  enum class Lane { main, side };

  /// `pace`: where the workers' pace is recorded (may be null). `scoped`: the main worker
  /// loads the subjects its cases need as they come, not every subject (a lane of a run with
  /// --jobs above 1, which serves a part of the cases).
  WorkerPool(const RunOptions& options, RunResult& run, PaceMeter* pace = nullptr, bool scoped = false);

  /// Take over `other`'s main worker (the first worker, every subject loaded).
  void adopt_main(WorkerPool& other);
  /// Start `n` workers like the first one (every subject, described), before the first one's
  /// hello: the main workers of the other lanes, loading while the first one does.
  std::vector<std::unique_ptr<WorkerProcess>> start_ahead(size_t n);
  /// A worker started ahead (start_ahead) becomes this pool's spare main worker.
  void give_main_spare(std::unique_ptr<WorkerProcess> w);
  /// The main worker's resident memory now (KiB; 0 without one).
  long main_rss_kib() const { return main_.proc ? main_.proc->rss_kib() : 0; }

  /// Start the first worker: it loads every subject and describes them (run.subjects). False,
  /// with `out` and failed_load() filled, when it died, hung or broke the protocol while
  /// loading; throws SubjectLoadError on a clean load error (bad input).
  bool start_first(CaseOutcome& out);

  /// Run one case in `lane` with `case_s` seconds times `pace` (its subject's pace, PaceMeter).
  /// False when it was not run: the subject's workers keep dying before any case can run
  /// (gave_up()).
  bool run(const CaseInfo& info, int subject, int peer, CaseOutcome& out, Lane lane, double case_s,
           double pace = 1.0);

  /// Run one case alone in a fresh worker of `lane` (a spare that has run nothing, or a new
  /// one), which is ended afterwards: a timeout's second try.
  bool run_alone(const CaseInfo& info, int subject, int peer, CaseOutcome& out, Lane lane, double case_s,
                 double pace = 1.0);

  /// Where the workers' pace is recorded from now on.
  void set_pace(PaceMeter* pace) { pace_ = pace; }

  /// The subjects each of the next cases that will want a fresh worker needs (at most
  /// kSpares of them): the crash-prone ones, or with --isolate=case the next cases.
  void upcoming(std::vector<std::vector<int>> needs) { next_needs_ = std::move(needs); }

  /// The bench (docs/design.md §11) in the main worker, started for it if need be.
  std::string bench(const std::string& settings_json, double route_timeout_s);

  /// End every worker (spares unused; the others told to stop, their exits checked).
  void finish();

  bool gave_up() const { return fruitless_ >= kMaxFruitlessWorkers; }
  const std::string& gave_up_reason() const { return gave_up_reason_; }
  const exchange::LoadStep& failed_load() const { return failed_load_; }
  /// Every worker started from now on leaves out the optional load step `step` (one that killed
  /// the first workers: exchange::step_is_optional).
  void skip_load_step(const std::string& step) {
    run_.left_out_steps += (run_.left_out_steps.empty() ? "" : ",") + step;
  }
  bool leaves_out_steps() const { return !run_.left_out_steps.empty(); }

  /// Spare workers kept loading ahead: one per case to come that will want a fresh process,
  /// this many at most (neighbouring crash-prone cases each need one; two loading at once keep
  /// two cores busy).
  static constexpr size_t kSpares = 2;
  /// After this many deaths in a row of workers that never finished a case (each followed by
  /// a fresh worker and a retry), the subject is taken to kill its own process.
  static constexpr int kMaxFruitlessWorkers = 6;

 private:
  /// A worker started ahead of the case that will need it, loading `preload` meanwhile.
  struct Spare {
    std::unique_ptr<WorkerProcess> proc;
    std::vector<int> preload;
  };
  /// One lane's worker: the subjects it has loaded (ascending) and the index in run.results of
  /// the result it gave last, when that result was the last thing it did (-1: none).
  struct Slot {
    std::unique_ptr<WorkerProcess> proc;
    std::vector<int> loaded;
    long answered = -1;
    /// Resident memory (KiB) once it had loaded what it holds: what it grew by since is what
    /// its cases left behind (retire_if_grown).
    long rss_base_kib = 0;
  };
  /// A worker told to stop and not yet reaped (settle_retired).
  struct Retiring {
    std::unique_ptr<WorkerProcess> proc;
    std::string when;
    int subject = -1;
    long answered = -1;
  };

  Slot& slot() { return lane_ == Lane::side ? side_ : main_; }
  bool pooled() const { return lane_ == Lane::side || options_.isolation == Isolation::per_case; }
  std::unique_ptr<WorkerProcess> spawn(const std::vector<int>& preload);
  bool handshake(CaseOutcome& out);
  bool ensure_worker(const std::vector<int>& need, const std::string& label, int subject);
  bool run_here(const CaseInfo& info, int subject, int peer, CaseOutcome& out, exchange::Budget budget);
  std::vector<int> all_subjects() const;
  std::vector<int> main_scope() const;
  std::vector<int> need_for(int subject, int peer) const;
  void prefetch();
  void retire(const std::string& when, int subject, bool wait);
  void retire_if_grown(const std::string& label, int subject, bool loaded_more);
  void settle_retired();
  void spoke_unasked(const std::string& unasked, const std::string& suffix, const std::string& next_case, int subject);
  bool taint(long answered, const std::string& unasked);
  void incident(const std::string& kind, const std::string& message, const std::string& signal,
                const std::string& next_case, int subject, const std::string& tail);
  std::string kill_current();
  void intruded(const exchange::Reply& reply, const std::string& label, int subject);
  std::string take_tail();
  std::string budget_tail(std::string t);

  const RunOptions& options_;
  RunResult& run_;
  PaceMeter* pace_;
  const bool scoped_;
  const unsigned long long memory_limit_mib_;
  Lane lane_ = Lane::main;
  Slot main_, side_;
  Spare spare_main_;
  std::deque<Spare> side_spares_;
  std::vector<Retiring> retiring_;
  std::vector<std::vector<int>> next_needs_;
  std::string last_label_;  ///< the case the current worker served last (--isolate=case)
  int last_subject_ = -1;
  bool main_died_ = false;  ///< a main worker died in a case: keep a spare main warm
  int fruitless_ = 0;
  std::string gave_up_reason_;
  exchange::LoadStep failed_load_;
  size_t tail_bytes_ = 0;
};

}  // namespace dlpv
