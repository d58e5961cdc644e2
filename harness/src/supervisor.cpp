// harness/src/supervisor.cpp: the supervisor side of DESIGN §7. It never loads a subject.
// Workers are spawned and exec'd (never a bare fork), in their own process group, with the
// library's stdout/stderr captured into a bounded tail; a crash or hang kills only the
// worker, and the next case gets a fresh one.
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/runner.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>

#include "protocol.hpp"

extern char** environ;

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
constexpr size_t kTailBytes = 64 * 1024;

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{} ({})", abbrev, sig) : fmt::format("signal {}", sig);
}

int dup_high(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

/// One worker process and its pipes.
class Worker {
 public:
  enum class Wait { event, eof, timeout };

  ~Worker() { kill_and_reap(); }

  bool spawn(const std::vector<std::string>& command, const std::vector<std::string>& subjects,
             std::string& err) {
    int ctl[2], evt[2], out[2], errp[2];
    if (pipe2(ctl, O_CLOEXEC) || pipe2(evt, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
        pipe2(errp, O_CLOEXEC)) {
      err = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    // Move every end above the fixed numbers so the dup2 calls below never collide.
    for (int* fd : {&ctl[0], &ctl[1], &evt[0], &evt[1], &out[0], &out[1], &errp[0], &errp[1]})
      *fd = dup_high(*fd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    posix_spawn_file_actions_adddup2(&fa, ctl[0], protocol::kCommandFd);
    posix_spawn_file_actions_adddup2(&fa, evt[1], protocol::kEventFd);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    std::vector<std::string> args = command;
    args.push_back("--internal-worker");
    args.insert(args.end(), subjects.begin(), subjects.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&pid_, command.front().c_str(), &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(ctl[0]);
    close(evt[1]);
    close(out[1]);
    close(errp[1]);
    ctl_ = ctl[1];
    evt_ = evt[0];
    out_ = out[0];
    err_ = errp[0];
    if (rc != 0) {
      pid_ = -1;
      err = std::string("cannot start worker: ") + std::strerror(rc);
      return false;
    }
    return true;
  }

  bool send(const std::string& line) {
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t w = write(ctl_, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w;
      left -= static_cast<size_t>(w);
    }
    return true;
  }

  /// Next event, or eof (worker closed its event fd / died), or timeout at the deadline.
  Wait next(nlohmann::json& ev, Clock::time_point deadline) {
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        ev = nlohmann::json::parse(line, nullptr, false);
        if (ev.is_discarded()) continue;  // not ours; ignore
        return Wait::event;
      }
      if (evt_eof_) return Wait::eof;
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return Wait::timeout;
      pump(static_cast<int>(std::min<long long>(left, 1000)));
    }
  }

  /// After EOF on the event fd: collect the remaining output briefly, then the exit status.
  int reap(int grace_ms = 2000) {
    auto until = Clock::now() + std::chrono::milliseconds(grace_ms);
    int status = 0;
    while (pid_ > 0) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) { pid_ = -1; break; }
      if (Clock::now() > until) {  // closed its fds but keeps running: end it
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
        break;
      }
      pump(20);
    }
    pump(0);
    return status;
  }

  void kill_and_reap() {
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    for (int* fd : {&ctl_, &evt_, &out_, &err_})
      if (*fd >= 0) { close(*fd); *fd = -1; }
  }

  void close_commands() {
    if (ctl_ >= 0) { close(ctl_); ctl_ = -1; }
  }

  bool alive() const { return pid_ > 0 && !evt_eof_; }
  void clear_tail() { tail_.clear(); }
  const std::string& tail() const { return tail_; }

 private:
  void pump(int timeout_ms) {
    pollfd fds[3] = {{evt_, POLLIN, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
    int n = poll(fds, 3, timeout_ms);
    if (n <= 0) return;
    char chunk[65536];
    for (int i = 0; i < 3; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t r = read(fds[i].fd, chunk, sizeof chunk);
      if (r > 0) {
        if (i == 0) {
          buf_.append(chunk, static_cast<size_t>(r));
        } else {
          tail_.append(chunk, static_cast<size_t>(r));
          if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
        }
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        if (i == 0) evt_eof_ = true;
        int* fd = i == 0 ? &evt_ : i == 1 ? &out_ : &err_;
        close(*fd);
        *fd = -1;
      }
    }
  }

  pid_t pid_ = -1;
  int ctl_ = -1, evt_ = -1, out_ = -1, err_ = -1;
  bool evt_eof_ = false;
  std::string buf_, tail_;
};

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string death_text(int status, std::string* signal_out) {
  if (WIFSIGNALED(status)) {
    *signal_out = signal_text(WTERMSIG(status));
    return "killed by " + *signal_out;
  }
  if (WIFEXITED(status))
    return fmt::format("the process exited with status {} in the middle of the case "
                       "(exit() called by the library?)", WEXITSTATUS(status));
  return "the worker ended abnormally";
}

class Supervisor {
 public:
  Supervisor(const RunOptions& o, RunResult& r) : opt_(o), run_(r) {}

  /// Start a worker and complete its handshake. Returns false (with `out` filled) when the
  /// worker died or hung while loading; throws SubjectLoadError on a clean load error.
  bool start(CaseOutcome& out) {
    worker_ = std::make_unique<Worker>();
    std::string err;
    if (!worker_->spawn(opt_.worker_command, opt_.subject_paths, err)) throw std::runtime_error(err);
    ++run_.workers_started;
    nlohmann::json ev;
    auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(opt_.timeout_s * 1000));
    Worker::Wait w = worker_->next(ev, deadline);
    if (w == Worker::Wait::event && ev.value("event", "") == "hello") {
      if (run_.subjects.empty())
        for (const auto& s : ev["subjects"]) run_.subjects.push_back(protocol::subject_from_json(s));
      return true;
    }
    if (w == Worker::Wait::event && ev.value("event", "") == "load_error")
      throw SubjectLoadError{ev.value("message", "cannot load subject")};
    out = CaseOutcome{};
    out.phase = "load";
    if (w == Worker::Wait::timeout) {
      out.status = Status::timeout;
      out.message = fmt::format("loading the subject did not finish within {} s", opt_.timeout_s);
      worker_->kill_and_reap();
    } else {
      out.status = Status::crash;
      int status = worker_->reap();
      out.message = "while loading the subject: " + death_text(status, &out.signal);
    }
    out.output_tail = worker_->tail();
    worker_.reset();
    return false;
  }

  CaseOutcome run_one(const CaseInfo& info, int subject) {
    CaseOutcome out;
    if (!worker_ && !start(out)) return out;
    worker_->clear_tail();
    const auto t0 = Clock::now();
    std::string phase = "setup";
    if (!worker_->send(fmt::format("run {} {}\n", subject, info.id))) {
      // The worker is gone (it died after its last result): retry once with a fresh one.
      worker_.reset();
      if (!start(out)) return out;
      worker_->send(fmt::format("run {} {}\n", subject, info.id));
    }
    const auto deadline = t0 + std::chrono::milliseconds(static_cast<long long>(opt_.timeout_s * 1000));
    for (;;) {
      nlohmann::json ev;
      Worker::Wait w = worker_->next(ev, deadline);
      if (w == Worker::Wait::event) {
        const std::string kind = ev.value("event", "");
        if (kind == "phase") { phase = ev.value("phase", phase); continue; }
        if (kind != "result") continue;
        out = protocol::outcome_from_json(ev["outcome"]);
        if (out.status != Status::pass) out.output_tail = worker_->tail();
        break;
      }
      out = CaseOutcome{};
      out.phase = phase;
      out.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
      if (w == Worker::Wait::timeout) {
        out.status = Status::timeout;
        out.message = fmt::format("the case did not finish within {} s (hung in phase '{}')",
                                  opt_.timeout_s, phase);
        worker_->kill_and_reap();
      } else {
        out.status = Status::crash;
        int status = worker_->reap();
        out.message = death_text(status, &out.signal) + " in phase '" + phase + "'";
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
  const RunOptions& opt_;
  RunResult& run_;
  std::unique_ptr<Worker> worker_;
};

}  // namespace

RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases) {
  RunResult run;
  run.started_at = iso_now();
  const auto t0 = Clock::now();

  if (options.isolation == Isolation::none) {
    std::vector<std::unique_ptr<Subject>> subjects;
    for (size_t i = 0; i < options.subject_paths.size(); ++i) {
      subjects.push_back(options.loader(options.subject_paths[i], static_cast<int>(i)));
      run.subjects.push_back(subjects.back()->info());
    }
    for (size_t s = 0; s < subjects.size(); ++s) {
      for (const CaseInfo* c : cases) {
        if (!applies_to(*c, subjects[s]->info().kind)) continue;
        run.results.push_back({c, static_cast<int>(s), run_case_in_process(*c, *subjects[s], {})});
      }
    }
  } else {
    Supervisor sup(options, run);
    CaseOutcome load_failure;
    // Load once up front so a clean load error is bad input before any case runs.
    const bool loaded = sup.start(load_failure);
    for (size_t s = 0; s < options.subject_paths.size(); ++s) {
      for (const CaseInfo* c : cases) {
        if (loaded && !applies_to(*c, run.subjects[s].kind)) continue;
        CaseOutcome out = loaded ? sup.run_one(*c, static_cast<int>(s)) : load_failure;
        run.results.push_back({c, static_cast<int>(s), std::move(out)});
      }
    }
    sup.finish();
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
  }
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return run;
}

}  // namespace dlpv
