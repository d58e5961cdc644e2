// harness/src/confirmer.hpp: the second try of a case that timed out (docs/design.md §7: a
// timeout is confirmed alone before it is reported), run beside the lanes in pools of its own;
// used by the supervisor (supervisor.cpp).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "worker_pool.hpp"

namespace dlpv::supervision {

/// Counts the workers the timeout confirmations may run at once.
class Slots {
 public:
  explicit Slots(int n) : free_(std::max(1, n)) {}
  /// One slot, taken (waiting for one) while this lives.
  class Held {
   public:
    explicit Held(Slots& s) : s_(s) {
      std::unique_lock<std::mutex> lock(s_.m_);
      s_.cv_.wait(lock, [&] { return s_.free_ > 0; });
      --s_.free_;
    }
    ~Held() {
      {
        std::lock_guard<std::mutex> lock(s_.m_);
        ++s_.free_;
      }
      s_.cv_.notify_one();
    }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    Slots& s_;
  };

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int free_;
};

/// A case that timed out is run once more alone in a fresh worker with twice the time
/// (docs/design.md §7: a timeout is confirmed before it is reported), in parallel with the run:
/// the lane goes on while the confirmation runs. Once a subject's hang in a phase has
/// reproduced alone, its further timeouts in that phase (same subject, same peer; a pair case
/// with the subject on both sides counts as the subject's own) are not run
/// again: the verdict a quiet machine gives them is the timeout, and a hang then costs its
/// time limit once. With -x (the next case depends on the verdict) it runs before the lane goes on.
class Confirmer {
 public:
  Confirmer(const RunOptions& options, const RunResult& run, PaceMeter& pace, int parallel)
      : options_(options), run_(run), pace_(pace), slots_(parallel) {}
  ~Confirmer() { wait(); }

  /// Planned case `k` timed out first in `first`, its subject's pace `pace` (the limit was
  /// --timeout times it). `now`: confirm before returning.
  void submit(size_t k, const CaseResult& r, const CaseOutcome& first, double pace, bool now) {
    // A pair case with the subject on both sides hangs in the subject's own code.
    const Key key{r.subject, r.peer == r.subject ? -1 : r.peer, first.phase};
    std::shared_future<bool> earlier;
    std::string where;  // the case whose timeout in this phase was run again first
    auto promise = std::make_shared<std::promise<bool>>();
    {
      std::lock_guard<std::mutex> lock(m_);
      auto it = known_.find(key);
      if (it != known_.end()) {
        earlier = it->second.first;
        where = it->second.second;
      } else {
        known_.emplace(key, std::make_pair(promise->get_future().share(), r.info->id));
      }
    }
    auto job = [this, k, r, first, pace, earlier, where, promise]() {
      Done d{k, first, {}};
      bool reproduced = false;
      if (earlier.valid() && earlier.get()) {
        d.out.message += fmt::format(" (not run again: this subject's hang in phase '{}' already reproduced alone "
                                     "in a fresh worker with twice the time, in {})",
                                     first.phase, where);
        d.known = true;
      } else {
        try {
          reproduced = confirm(r, d, pace);
        } catch (const std::exception& e) {  // no worker for the second try: the first stands
          d.out = first;
          d.out.message += fmt::format(" (not confirmed: the second try could not start: {})", e.what());
        }
      }
      if (!earlier.valid()) promise->set_value(reproduced);
      std::lock_guard<std::mutex> lock(m_);
      done_.push_back(std::move(d));
    };
    if (now) {
      job();
    } else {
      std::lock_guard<std::mutex> lock(m_);
      jobs_.push_back(std::async(std::launch::async, job));
    }
  }

  /// Wait for every confirmation; `apply(k, outcome, incidents)` for each, in planned order.
  void wait() {
    std::vector<std::future<void>> jobs;
    {
      std::lock_guard<std::mutex> lock(m_);
      jobs.swap(jobs_);
    }
    for (auto& j : jobs) j.wait();
  }
  template <class F>
  void each(F&& apply) {
    wait();
    std::sort(done_.begin(), done_.end(), [](const Done& a, const Done& b) { return a.k < b.k; });
    for (Done& d : done_) apply(d.k, d.out, d.shard, d.known);
  }

 private:
  struct Key {
    int subject, peer;
    std::string phase;
    bool operator<(const Key& o) const {
      return std::tie(subject, peer, phase) < std::tie(o.subject, o.peer, o.phase);
    }
  };
  struct Done {
    size_t k;
    CaseOutcome out;
    RunResult shard;  ///< the confirming pool's figures and incidents
    bool known = false;
  };

  /// The second try, in a pool of its own: `d.out` becomes its outcome, with the first noted.
  bool confirm(const CaseResult& r, Done& d, double pace) {
    const CaseOutcome first = d.out;
    d.shard.subjects = run_.subjects;
    d.shard.left_out_steps = run_.left_out_steps;
    CaseOutcome second;
    bool ran;
    {
      Slots::Held slot(slots_);  // given back however the try ends (a spawn that throws included)
      WorkerPool pool(options_, d.shard, &pace_, true);
      ran = pool.run_alone(*r.info, r.subject, r.peer, second, WorkerPool::Lane::side, 2 * options_.timeout_s, pace);
      pool.finish();
    }
    if (!ran) return false;  // the subject's workers stopped starting: the first try stands
    d.out = second;
    if (second.status == Status::timeout) {
      d.out.message += fmt::format(" (reproduced: run again alone in a fresh worker with twice the time, after the "
                                   "first try had timed out at {} s)",
                                   paced_s(options_.timeout_s, pace));
      d.out.first_try = first.message;
      return true;
    }
    d.out.first_try = fmt::format("the first try timed out ({}); run again alone in a fresh worker with {} s, it "
                                  "ended {}",
                                  first.message, paced_s(2 * options_.timeout_s, pace), to_string(second.status));
    return false;
  }

  const RunOptions& options_;
  const RunResult& run_;
  PaceMeter& pace_;
  Slots slots_;
  std::mutex m_;
  std::map<Key, std::pair<std::shared_future<bool>, std::string>> known_;
  std::vector<std::future<void>> jobs_;
  std::vector<Done> done_;
};

}  // namespace dlpv::supervision
