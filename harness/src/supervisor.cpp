// harness/src/supervisor.cpp: the supervisor side of DESIGN §7. It never loads a subject.
// Workers are spawned and exec'd (never a bare fork), in their own process group, with the
// library's stdout/stderr captured into a bounded tail; a crash or hang kills only the
// worker, and the next case gets a fresh one.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>

#include "protocol.hpp"
#include "worker_process.hpp"



namespace dlpv {

const char* to_string(Isolation i) {
  switch (i) {
    case Isolation::worker: return "worker";
    case Isolation::per_case: return "case";
    case Isolation::none: return "none";
  }
  return "worker";
}

std::vector<const CaseInfo*> select_cases(const std::vector<std::string>& filters) {
  std::vector<const CaseInfo*> out;
  for (const CaseInfo& c : Registry::instance().cases()) {
    bool keep = filters.empty();
    for (const std::string& f : filters) keep = keep || glob_match(f, c.id);
    if (keep) out.push_back(&c);
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

class Supervisor {
 public:
  Supervisor(const RunOptions& o, RunResult& r)
      : opt_(o), run_(r), memory_limit_mib_(memory_limit_mib()) {}

  /// Start a worker and complete its handshake. Returns false (with `out` filled) when the
  /// worker died or hung while loading; throws SubjectLoadError on a clean load error.
  bool start(CaseOutcome& out) {
    worker_ = std::make_unique<WorkerProcess>();
    std::string err;
    // The first worker loads every subject (its hello describes them); later ones (after a
    // crash or with --isolate=case) load only what their cases need.
    if (!worker_->spawn(opt_.worker_command, opt_.subject_paths, memory_limit_mib_, err, !run_.subjects.empty()))
      throw std::runtime_error(err);
    ++run_.workers_started;
    nlohmann::json ev;
    auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(opt_.timeout_s * 1000));
    WorkerProcess::Wait w = worker_->next(ev, deadline);
    const std::string kind = w == WorkerProcess::Wait::event ? event_kind(ev) : "";
    if (kind == "hello") {
      if (run_.subjects.empty()) {
        try {
          for (const auto& s : ev.at("subjects")) run_.subjects.push_back(protocol::subject_from_json(s));
        } catch (const nlohmann::json::exception& e) {
          throw std::runtime_error(std::string("malformed hello from the worker: ") + e.what());
        }
      }
      return true;
    }
    if (kind == "load_error") {
      const auto msg = ev.find("message");
      throw SubjectLoadError{msg != ev.end() && msg->is_string() ? msg->get<std::string>()
                                                                 : "cannot load subject"};
    }
    out = CaseOutcome{};
    out.phase = "load";
    if (w == WorkerProcess::Wait::timeout) {
      out.status = Status::timeout;
      out.message = fmt::format("loading the subject did not finish within {} s", opt_.timeout_s);
      worker_->kill_and_reap();
    } else {
      out.status = Status::crash;
      int status = worker_->reap();
      out.message = "while loading the subject: " +
                    death_text(status, &out.signal, worker_->max_rss_kib(), memory_limit_mib_);
    }
    out.output_tail = worker_->tail();
    worker_.reset();
    return false;
  }

  CaseOutcome run_one(const CaseInfo& info, int subject, int peer = -1) {
    const std::string command = peer >= 0 ? fmt::format("run {} {} {}\n", subject, info.id, peer)
                                          : fmt::format("run {} {}\n", subject, info.id);
    CaseOutcome out;
    if (!worker_ && !start(out)) return out;
    worker_->clear_tail();
    const auto t0 = Clock::now();
    std::string phase = "setup";
    if (!worker_->send(command)) {
      // The worker is gone (it died after its last result): retry once with a fresh one.
      worker_.reset();
      if (!start(out)) return out;
      worker_->send(command);
    }
    const auto deadline = t0 + std::chrono::milliseconds(static_cast<long long>(opt_.timeout_s * 1000));
    for (;;) {
      nlohmann::json ev;
      WorkerProcess::Wait w = worker_->next(ev, deadline);
      if (w == WorkerProcess::Wait::event) {
        const std::string kind = event_kind(ev);
        if (kind == "phase") {
          const auto p = ev.find("phase");
          if (p != ev.end() && p->is_string()) phase = p->get<std::string>();
          continue;
        }
        if (kind != "result") continue;
        try {
          out = protocol::outcome_from_json(ev.at("outcome"));
        } catch (const nlohmann::json::exception& e) {
          out = CaseOutcome{};
          out.status = Status::error;
          out.phase = phase;
          out.message = std::string("malformed result from the worker: ") + e.what();
        }
        if (out.status != Status::pass) out.output_tail = worker_->tail();
        break;
      }
      out = CaseOutcome{};
      out.phase = phase;
      out.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (w == WorkerProcess::Wait::timeout) {
        out.status = Status::timeout;
        out.message = fmt::format("the case did not finish within {} s (hung in phase '{}')",
                                  opt_.timeout_s, phase);
        worker_->kill_and_reap();
      } else {
        out.status = Status::crash;
        int status = worker_->reap();
        out.message = death_text(status, &out.signal, worker_->max_rss_kib(), memory_limit_mib_) +
                      " in phase '" + phase + "'";
      }
      out.output_tail = worker_->tail();
      worker_.reset();
      break;
    }
    if (opt_.isolation == Isolation::per_case && worker_) {
      worker_->close_commands();
      worker_->reap();
      worker_.reset();
    }
    return out;
  }

  void finish() {
    if (worker_) {
      worker_->close_commands();
      worker_->reap();
      worker_.reset();
    }
  }

 private:
  static std::string event_kind(const nlohmann::json& ev) {
    const auto k = ev.find("event");
    return k != ev.end() && k->is_string() ? k->get<std::string>() : std::string();
  }

  const RunOptions& opt_;
  RunResult& run_;
  const unsigned long long memory_limit_mib_;
  std::unique_ptr<WorkerProcess> worker_;
};

}  // namespace

namespace {
/// Deterministic order: per subject, cases by id; a pair case once per consumer subject.
std::vector<CaseResult> plan(const std::vector<const CaseInfo*>& cases,
                             const std::vector<SubjectInfo>& subjects) {
  std::vector<CaseResult> out;
  for (size_t s = 0; s < subjects.size(); ++s) {
    for (const CaseInfo* c : cases) {
      if (!applies_to(*c, subjects[s].kind)) continue;
      if (c->role != Role::pair) {
        out.push_back({c, static_cast<int>(s), -1, {}});
        continue;
      }
      for (size_t p = 0; p < subjects.size(); ++p)
        if (applies_to(*c, subjects[p].kind)) out.push_back({c, static_cast<int>(s), static_cast<int>(p), {}});
    }
  }
  return out;
}
}  // namespace

RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases) {
  RunResult run;
  run.started_at = protocol::iso_now();
  const auto t0 = Clock::now();

  if (options.isolation == Isolation::none) {
    std::vector<std::unique_ptr<Subject>> subjects;
    for (size_t i = 0; i < options.subject_paths.size(); ++i) {
      subjects.push_back(options.loader(options.subject_paths[i], static_cast<int>(i)));
      run.subjects.push_back(subjects.back()->info());
    }
    run.results = plan(cases, run.subjects);
    for (CaseResult& r : run.results)
      r.outcome = run_case_in_process(*r.info, *subjects[static_cast<size_t>(r.subject)], {},
                                      r.peer >= 0 ? subjects[static_cast<size_t>(r.peer)].get() : nullptr);
  } else {
    Supervisor sup(options, run);
    CaseOutcome load_failure;
    // Load once up front so a clean load error is bad input before any case runs.
    const bool loaded = sup.start(load_failure);
    if (!loaded && run.subjects.empty()) {
      for (size_t i = 0; i < options.subject_paths.size(); ++i) {
        SubjectInfo info;
        info.index = static_cast<int>(i);
        info.kind = "plugin";
        info.path = options.subject_paths[i];
        info.name = "(not loaded)";
        info.notes.push_back(load_failure.message);
        run.subjects.push_back(info);
      }
    }
    run.results = plan(cases, run.subjects);
    for (CaseResult& r : run.results)
      r.outcome = loaded ? sup.run_one(*r.info, r.subject, r.peer) : load_failure;
    sup.finish();
  }
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return run;
}

}  // namespace dlpv
