// harness/src/worker_pool.cpp: which worker runs a case (worker_pool.hpp).
// SPDX-License-Identifier: Apache-2.0
#include "worker_pool.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "selection.hpp"

namespace dlpv {

namespace {

using Clock = std::chrono::steady_clock;

/// Output tails kept for the whole run (results and incidents); past it, 2 KiB each.
constexpr size_t kTailBudget = 16u << 20;
constexpr size_t kSmallTail = 2048;

/// True when a worker that has loaded `loaded` can serve a case needing `need` by loading the
/// rest after what it has (never a subject before one loaded later on the command line).
bool in_order(const std::vector<int>& loaded, const std::vector<int>& need) {
  const int last = loaded.empty() ? -1 : loaded.back();
  for (int i : need)
    if (i < last && std::find(loaded.begin(), loaded.end(), i) == loaded.end()) return false;
  return true;
}

/// Every subject of `need` is among `loaded`.
bool covers(const std::vector<int>& loaded, const std::vector<int>& need) {
  return std::all_of(need.begin(), need.end(),
                     [&](int i) { return std::find(loaded.begin(), loaded.end(), i) != loaded.end(); });
}

}  // namespace

void PaceMeter::add(Sums& s, double cpu, double wait) {
  if (cpu < 0 || wait < 0) return;
  s.cpu += cpu;
  s.wait += wait;
  if (s.cpu > kWindowS) {
    s.cpu /= 2;
    s.wait /= 2;
  }
}

void PaceMeter::loaded(const std::vector<int>& subjects, double on_cpu_s, double waiting_s) {
  std::lock_guard<std::mutex> lock(m_);
  for (int i : subjects)
    if (i >= 0 && static_cast<size_t>(i) < loads_.size()) add(loads_[static_cast<size_t>(i)], on_cpu_s, waiting_s);
}

void PaceMeter::ran(int subject, double on_cpu_s, double waiting_s) {
  std::lock_guard<std::mutex> lock(m_);
  if (subject >= 0 && static_cast<size_t>(subject) < cases_.size())
    add(cases_[static_cast<size_t>(subject)], on_cpu_s, waiting_s);
}

double PaceMeter::pace(int subject) const {
  std::lock_guard<std::mutex> lock(m_);
  if (subject < 0 || static_cast<size_t>(subject) >= cases_.size()) return 1.0;
  const Sums& c = cases_[static_cast<size_t>(subject)];
  const Sums& l = loads_[static_cast<size_t>(subject)];
  const Sums& s = c.cpu >= kEvidenceS ? c : l;
  if (s.cpu < kEvidenceS) return 1.0;
  const double p = (s.cpu + s.wait) / s.cpu;
  if (p < kSlow) return 1.0;
  return std::min(kMaxPace, std::round(p * 10) / 10);
}

WorkerPool::WorkerPool(const RunOptions& options, RunResult& run, PaceMeter* pace, bool scoped)
    : options_(options), run_(run), pace_(pace), scoped_(scoped), memory_limit_mib_(memory_limit_mib()) {}

std::vector<std::unique_ptr<WorkerProcess>> WorkerPool::start_ahead(size_t n) {
  std::vector<std::unique_ptr<WorkerProcess>> out;
  for (size_t i = 0; i < n; ++i) out.push_back(spawn({}));
  return out;
}

void WorkerPool::give_main_spare(std::unique_ptr<WorkerProcess> w) {
  spare_main_.proc = std::move(w);
  spare_main_.preload = all_subjects();
}

void WorkerPool::adopt_main(WorkerPool& other) {
  main_ = std::move(other.main_);
  other.main_ = Slot{};
  main_.answered = -1;
}

std::unique_ptr<WorkerProcess> WorkerPool::spawn(const std::vector<int>& preload) {
  auto w = std::make_unique<WorkerProcess>();
  std::string err;
  // The first worker loads every subject (its hello describes them); later ones are lazy.
  if (!w->spawn(options_.worker_command, options_.subject_paths, memory_limit_mib_, err, !run_.subjects.empty(),
                preload, run_.left_out_steps))
    throw std::runtime_error(err);
  ++run_.workers_started;
  return w;
}

bool WorkerPool::start_first(CaseOutcome& out) {
  lane_ = Lane::main;
  main_.proc = spawn({});
  main_.loaded = all_subjects();
  return handshake(out);
}

/// Wait for the current worker's hello (its loading has the load deadline, not a case's).
bool WorkerPool::handshake(CaseOutcome& out) {
  ++fruitless_;  // until it finishes a case
  slot().answered = -1;
  failed_load_ = exchange::LoadStep{};
  const auto t0 = Clock::now();
  exchange::Hello hello = exchange::await_hello(*slot().proc, options_.load_timeout_s, memory_limit_mib_);
  run_.load_wait_s += std::chrono::duration<double>(Clock::now() - t0).count();
  if (hello.intruded)
    run_.incidents.push_back(Incident{
        "intrusion",
        fmt::format("the library wrote into the worker's event pipe while a worker was {}: {} line{} carrying no "
                    "nonce of the validator's (first: {}); none was believed, and the worker's own events decided "
                    "how its load ended",
                    exchange::step_words(hello.intruded_at.step), hello.intruded,
                    hello.intruded == 1 ? "" : "s", exchange::quote_line(hello.first_intrusion)),
        "", "", hello.intruded_at.subject, ""});
  if (hello.load_error) {
    slot().proc.reset();
    throw SubjectLoadError{hello.load_error_message.empty() ? "cannot load subject" : hello.load_error_message};
  }
  if (!hello.ok) {
    failed_load_ = hello.failed;
    out = hello.failure;
    out.output_tail = take_tail();
    slot().proc.reset();
    return false;
  }
  if (run_.subjects.empty()) run_.subjects = std::move(hello.subjects);
  double cpu = 0, wait = 0;
  if (pace_ && slot().proc->sched(cpu, wait)) pace_->loaded(slot().loaded, cpu, wait);
  return true;
}

bool WorkerPool::run(const CaseInfo& info, int subject, int peer, CaseOutcome& out, Lane lane, double case_s,
                     double pace) {
  // --isolate=case: the last case's worker exits while this case runs in the next one.
  if (options_.isolation == Isolation::per_case && main_.proc && !last_label_.empty()) {
    lane_ = Lane::main;
    retire("after " + last_label_, last_subject_, false);
    last_label_.clear();
  }
  lane_ = lane;
  const bool ran = run_here(info, subject, peer, out, {options_.load_timeout_s, paced_s(case_s, pace), pace});
  lane_ = Lane::main;
  settle_retired();
  return ran;
}

bool WorkerPool::run_alone(const CaseInfo& info, int subject, int peer, CaseOutcome& out, Lane lane, double case_s,
                           double pace) {
  lane_ = lane;
  kill_current();  // no-op when the first try already ended it
  const bool ran = run_here(info, subject, peer, out, {options_.load_timeout_s, paced_s(case_s, pace), pace});
  kill_current();  // the cases after it run in workers of their own
  lane_ = Lane::main;
  return ran;
}

/// The current lane has a worker that can serve a case needing `need`: an adopted spare or a
/// fresh one. False (an incident recorded) when a fresh worker did not start.
bool WorkerPool::ensure_worker(const std::vector<int>& need, const std::string& label, int subject) {
  Slot& s = slot();
  // A worker imports only after what it has already loaded (the first worker's order): one that
  // would have to load a subject out of that order is ended, and a fresh one serves the case.
  if (s.proc && !in_order(s.loaded, need))
    retire("before " + label + " (it would load subjects out of order)", subject, false);
  if (s.proc) return true;
  Spare* spare = &spare_main_;
  if (pooled()) {
    auto it = std::find_if(side_spares_.begin(), side_spares_.end(),
                           [&](const Spare& sp) { return covers(sp.preload, need); });
    spare = it == side_spares_.end() ? nullptr : &*it;
  }
  if (spare && spare->proc && covers(spare->preload, need)) {
    s.proc = std::move(spare->proc);
    s.loaded = std::move(spare->preload);
    *spare = Spare{};
    if (pooled())
      side_spares_.erase(
          std::find_if(side_spares_.begin(), side_spares_.end(), [](const Spare& sp) { return !sp.proc; }));
  } else {
    s.proc = spawn(need);
    s.loaded = need;
  }
  CaseOutcome lo;
  if (handshake(lo)) {
    s.rss_base_kib = s.proc->rss_kib();
    return true;
  }
  // A death while loading again.
  incident(lo.status == Status::timeout ? "unresponsive" : lo.status == Status::error ? "protocol" : "died",
           "a fresh worker did not start: " + lo.message, lo.signal, label, subject, lo.output_tail);
  return false;
}

bool WorkerPool::run_here(const CaseInfo& info, int subject, int peer, CaseOutcome& out, exchange::Budget budget) {
  const std::string label = peer >= 0 ? fmt::format("{} (subject {} -> {})", info.id, subject, peer)
                            : run_.subjects.size() > 1 ? fmt::format("{} (subject {})", info.id, subject)
                                                       : info.id;
  for (;;) {
    if (gave_up()) return false;
    if (!ensure_worker(need_for(subject, peer), label, subject)) continue;
    Slot& s = slot();
    // Between cases the worker must be silent and alive.
    std::string unasked;
    const WorkerProcess::Idle idle = s.proc->check_idle(unasked);
    if (idle == WorkerProcess::Idle::data) {
      spoke_unasked(unasked, "; the worker was killed and replaced", label, subject);
      continue;
    }
    if (idle == WorkerProcess::Idle::gone) {
      std::string sig;
      const std::string why = death_text(s.proc->reap(), &sig, s.proc->max_rss_kib(), memory_limit_mib_);
      incident("died", "the worker died while no case was running: " + why, sig, label, subject, take_tail());
      continue;
    }
    prefetch();
    s.proc->clear_tail();
    double cpu0 = 0, wait0 = 0;
    const bool timed = pace_ && s.proc->sched(cpu0, wait0);
    exchange::Reply reply =
        exchange::run(*s.proc, subject, info.id, peer, budget, memory_limit_mib_);
    double cpu1 = 0, wait1 = 0;
    if (timed && reply.end == exchange::End::result && reply.outcome.status == Status::pass &&
        s.proc->sched(cpu1, wait1))
      pace_->ran(subject, cpu1 - cpu0, wait1 - wait0);  // a clean case: the subject's pace
    if (reply.intruded) intruded(reply, label, subject);
    switch (reply.end) {
      case exchange::End::not_accepted:
        // Nothing of the case ran: charged to no case, and the case runs in a fresh worker. A line
        // written instead of the acknowledgement came after the worker's last result: that result
        // is withdrawn (it may have been a forgery that came first).
        if (reply.kind == "protocol" && taint(s.answered, reply.line)) {
          s.proc.reset();
          continue;
        }
        [[fallthrough]];
      case exchange::End::load_death:
        incident(reply.kind, reply.message, reply.signal, label, subject, take_tail());
        continue;
      case exchange::End::violation:
      case exchange::End::timeout:
      case exchange::End::crash:
        out = std::move(reply.outcome);
        out.output_tail = take_tail();
        if (reply.end != exchange::End::violation && lane_ == Lane::main)
          main_died_ = true;  // from now on a spare main is kept warm
        fruitless_ = 0;      // the worker died in a case it had accepted: it did run cases
        s.proc.reset();
        return true;
      case exchange::End::result:
        break;
    }
    out = std::move(reply.outcome);
    if (out.status != Status::pass) out.output_tail = take_tail();
    fruitless_ = 0;
    if (reply.intruded) {
      kill_current();
      return true;
    }
    bool loaded_more = false;
    for (int i : {subject, peer})
      if (i >= 0 && std::find(s.loaded.begin(), s.loaded.end(), i) == s.loaded.end()) {
        s.loaded.push_back(i);
        loaded_more = true;
      }
    std::sort(s.loaded.begin(), s.loaded.end());
    s.answered = static_cast<long>(run_.results.size());  // its last words: this case's result (kept next)
    last_label_ = label;                                  // --isolate=case: retired when the next case begins
    last_subject_ = subject;
    retire_if_grown(label, subject, loaded_more);
    return true;
  }
}

std::string WorkerPool::bench(const std::string& settings_json, double route_timeout_s) {
  lane_ = Lane::main;
  CaseOutcome lo;
  if (!main_.proc && !start_first(lo))
    return nlohmann::json{{"error", "the bench worker could not load the subjects: " + lo.message}}.dump();
  main_.proc->clear_tail();
  bool ok = false;
  std::string section = exchange::bench(*main_.proc, settings_json, route_timeout_s, memory_limit_mib_, ok);
  std::fputs(take_tail().c_str(), stderr);  // what the library printed while timed
  if (ok)
    retire("after the bench", -1, true);
  else
    main_.proc.reset();
  return section;
}

void WorkerPool::finish() {
  // Spares never served a case: ended without a verdict on their exit.
  if (spare_main_.proc) ++run_.spares_unused;
  for (Spare& sp : side_spares_)
    if (sp.proc) ++run_.spares_unused;
  spare_main_ = Spare{};
  side_spares_.clear();
  if (side_.proc) {
    lane_ = Lane::side;
    retire("at the end of the run", -1, true);
  }
  lane_ = Lane::main;
  if (main_.proc) {
    const bool per_case = options_.isolation == Isolation::per_case;
    retire(per_case ? "after " + last_label_ : "at the end of the run", per_case ? last_subject_ : -1, true);
  }
  settle_retired();
}

std::vector<int> WorkerPool::all_subjects() const {
  std::vector<int> all;
  for (size_t i = 0; i < std::max(run_.subjects.size(), options_.subject_paths.size()); ++i)
    all.push_back(static_cast<int>(i));
  return all;
}

/// What a spare main worker loads: every subject, or in a scoped lane what its main worker had
/// (a prefix of the subjects).
std::vector<int> WorkerPool::main_scope() const {
  return scoped_ ? main_.loaded : all_subjects();
}

/// The subjects a fresh worker for this case loads: the case's own (and its peer's) in a side
/// worker or with --isolate=case; every subject for the main worker, which serves all the cases
/// to come.
std::vector<int> WorkerPool::need_for(int subject, int peer) const {
  if (lane_ == Lane::main && options_.isolation != Isolation::per_case) {
    if (!scoped_) return all_subjects();
    // A lane's main worker loads the subjects up to the highest its case needs, in order: the
    // lanes' queue comes by that highest subject, so the worker only ever adds to what it has.
    std::vector<int> prefix;
    for (int i = 0; i <= std::max(subject, peer); ++i) prefix.push_back(i);
    return prefix;
  }
  return case_subjects(subject, peer);
}

/// Start the workers the next cases will want while this one runs, so that a crash costs a
/// process swap rather than an import: with --isolate=case the next case's worker; else a spare
/// main worker (every subject loaded) once one has died, and a side worker for the next
/// crash-prone case unless the side worker there can serve it and is not about to be tested by a
/// predicted crash itself.
void WorkerPool::prefetch() {
  auto want = [&](Spare& spare, const std::vector<int>& need) {
    if (need.empty() || (spare.proc && spare.preload == need)) return;
    if (spare.proc) ++run_.spares_unused;
    spare = Spare{};  // a spare for other subjects: ended unused
    spare.proc = spawn(need);
    spare.preload = need;
  };
  // Pooled spares: one per case ahead that wants a fresh worker (with --isolate=case every case;
  // else the crash-prone ones, except one the idle side worker can take).
  std::vector<std::vector<int>> wanted;
  const bool per_case = options_.isolation == Isolation::per_case;
  if (!per_case && main_died_) want(spare_main_, main_scope());
  // With --isolate=case every case ahead takes a spare of its own. Otherwise a spare is taken
  // only when a crash-prone case ends its worker, and the next spare starts as the adopted one
  // runs the case after it: one spare per distinct set of subjects is enough. Two alike (the
  // crash-prone cases of one subject share theirs) were mostly ended unused: 35 of the 73
  // workers of the pinned pair matrix, each importing its two libraries again.
  std::vector<std::vector<int>> needs;
  for (const std::vector<int>& need : next_needs_)
    if (per_case || std::find(needs.begin(), needs.end(), need) == needs.end()) needs.push_back(need);
  for (size_t i = 0; i < needs.size(); ++i) {
    if (!per_case && i == 0 && lane_ == Lane::main && side_.proc && in_order(side_.loaded, needs[0])) continue;
    wanted.push_back(needs[i]);
  }
  // Keep every spare a case ahead can use (also one the idle side worker may make needless: if
  // it dies, the spare is next); start only the missing ones; end the rest unused.
  std::deque<Spare> keep;
  std::vector<std::vector<int>> missing;
  for (const std::vector<int>& need : needs) {
    auto it = std::find_if(side_spares_.begin(), side_spares_.end(),
                           [&](const Spare& sp) { return sp.proc && covers(sp.preload, need); });
    if (it != side_spares_.end()) {
      keep.push_back(std::move(*it));
    } else if (std::find(wanted.begin(), wanted.end(), need) != wanted.end()) {
      missing.push_back(need);
    }
  }
  for (Spare& sp : side_spares_)
    if (sp.proc) ++run_.spares_unused;
  side_spares_ = std::move(keep);
  for (const std::vector<int>& need : missing) {
    side_spares_.emplace_back();
    want(side_spares_.back(), need);
  }
}

/// End the current lane's worker that is done (end of run, --isolate=case): its commands
/// closed, it must exit 0 and say nothing more. With `wait` false it is told to stop and left to
/// exit while the next case runs; settle_retired() collects it after that case (a fixed point,
/// so the incidents' order does not depend on timing).
void WorkerPool::retire(const std::string& when, int subject, bool wait) {
  Slot& s = slot();
  std::string unasked;
  if (s.proc->check_idle(unasked) == WorkerProcess::Idle::data) {
    spoke_unasked(unasked, " (" + when + ")", "", subject);
    return;
  }
  s.proc->close_commands();
  retiring_.push_back({std::move(s.proc), when, subject, s.answered});
  s.answered = -1;
  if (wait) settle_retired();
}

/// A worker whose cases left it more than kGrownKib larger than it was once loaded is retired
/// after the case, and the next case runs in a fresh one: what a leaking library kept from earlier
/// cases never decides whether a later case fits in the memory limit (a mutant without a deleter
/// grew its worker to 1.4 GB over the plugin's cases, and the first case to reach a 1 GiB limit
/// crashed where, with more memory, it failed). A case that loaded another subject (a pair's
/// peer) sets the new base instead.
void WorkerPool::retire_if_grown(const std::string& label, int subject, bool loaded_more) {
  constexpr long kGrownKib = 512L * 1024;
  Slot& s = slot();
  if (!s.proc) return;
  const long rss = s.proc->rss_kib();
  if (loaded_more || s.rss_base_kib <= 0) {
    s.rss_base_kib = rss;
    return;
  }
  if (rss - s.rss_base_kib > kGrownKib)
    retire(fmt::format("after {}: it had grown by {} MiB since it loaded its subjects", label,
                       (rss - s.rss_base_kib) >> 10),
           subject, false);
}

/// Collect the workers told to stop. A line one wrote after its last result withdraws that
/// result (it was not the worker's last word, so the result may have been forged); dying on the
/// way out (a library's exit handler or destructor) is an incident.
void WorkerPool::settle_retired() {
  for (Retiring& r : retiring_) {
    // Tearing a library down takes as long as loading it may (a matrix worker holds torch, JAX,
    // TensorFlow and Paddle at once): the load deadline, not one case's time, on a busy machine.
    const int status = r.proc->reap(static_cast<int>(std::max(options_.timeout_s, options_.load_timeout_s) * 1000));
    if (!r.proc->unread_events().empty() && taint(r.answered, r.proc->unread_events())) continue;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
    std::string sig;
    const std::string why = death_text(status, &sig, r.proc->max_rss_kib(), memory_limit_mib_);
    run_.incidents.push_back(Incident{"died",
                                      "the worker did not exit cleanly when told to stop (" + r.when + "): " + why,
                                      sig, "", r.subject, budget_tail(r.proc->tail())});
  }
  retiring_.clear();
}

/// The worker wrote while no case was running. A second result, or any line after its last one,
/// withdraws the result it last gave (taint); otherwise it is an incident. Either way the worker
/// is killed and nothing it sent is believed.
void WorkerPool::spoke_unasked(const std::string& unasked, const std::string& suffix, const std::string& next_case,
                               int subject) {
  const std::string tail = kill_current();
  if (!taint(slot().answered, unasked))
    incident("protocol",
             "worker protocol violated while no case was running: it wrote " + exchange::quote_line(unasked) +
                 " unasked" + suffix,
             "", next_case, subject, tail);
  slot().answered = -1;
}

/// A worker that writes after its result: that result is not believed (it may have been a
/// forgery that came first). True when there was such a result to withdraw.
bool WorkerPool::taint(long answered, const std::string& unasked) {
  if (answered < 0 || answered >= static_cast<long>(run_.results.size())) return false;
  CaseOutcome& last = run_.results[static_cast<size_t>(answered)].outcome;
  const std::string believed = to_string(last.status);
  last = CaseOutcome{};
  last.status = Status::error;
  last.phase = "result";
  last.message = "worker protocol violated: after this case's result the worker wrote " +
                 exchange::quote_line(unasked) +
                 " (a second result, or a line the library wrote into the event pipe); the result (" + believed +
                 ") is not believed and the worker was killed";
  if (main_.answered == answered) main_.answered = -1;
  if (side_.answered == answered) side_.answered = -1;
  return true;
}

/// The library wrote into the event pipe while a case ran: charged to it as an incident of its
/// own; the case's verdict, from the worker's own events, stands (run_here then retires the
/// worker: a library that writes into its pipe once may do it between cases).
void WorkerPool::intruded(const exchange::Reply& reply, const std::string& label, int subject) {
  const std::string status =
      reply.end == exchange::End::result ? std::string(to_string(reply.outcome.status)) + " result was kept"
      : reply.end == exchange::End::crash || reply.end == exchange::End::timeout
          ? std::string(to_string(reply.outcome.status)) + " stands"
          : "outcome is its own";
  run_.incidents.push_back(Incident{
      "intrusion",
      fmt::format("the library wrote into the worker's event pipe while {} ran: {} line{} carrying no nonce of the "
                  "validator's (first: {}); none was believed, the case's own {}, and the worker was replaced",
                  label, reply.intruded, reply.intruded == 1 ? "" : "s", exchange::quote_line(reply.first_intrusion),
                  status),
      "", "", subject, ""});
}

void WorkerPool::incident(const std::string& kind, const std::string& message, const std::string& signal,
                          const std::string& next_case, int subject, const std::string& tail) {
  slot().proc.reset();
  run_.incidents.push_back(Incident{kind, message, signal, next_case, subject, tail});
  if (gave_up() && gave_up_reason_.empty())
    gave_up_reason_ = fmt::format("{} fresh workers in a row died before finishing a case (last: {})",
                                  kMaxFruitlessWorkers, message);
}

/// Kill the current lane's worker now (hung, stopped or untrusted) and return its output tail.
std::string WorkerPool::kill_current() {
  Slot& s = slot();
  if (!s.proc) return {};
  s.proc->kill_and_reap();
  std::string tail = take_tail();
  s.proc.reset();
  return tail;
}

/// The current worker's output tail, within the run's budget so that thousands of crashes
/// cannot grow the supervisor without bound.
std::string WorkerPool::take_tail() {
  Slot& s = slot();
  if (!s.proc) return {};
  std::string t = s.proc->tail();
  s.proc->clear_tail();
  return budget_tail(std::move(t));
}

std::string WorkerPool::budget_tail(std::string t) {
  if (tail_bytes_ + t.size() > kTailBudget && t.size() > kSmallTail) t.erase(0, t.size() - kSmallTail);
  tail_bytes_ += t.size();
  return t;
}

}  // namespace dlpv
