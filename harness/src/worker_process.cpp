// harness/src/worker_process.cpp: see worker_process.hpp.
// SPDX-License-Identifier: Apache-2.0
#include "worker_process.hpp"

#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/subject.hpp>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "protocol.hpp"

extern char** environ;

namespace dlpv {

namespace {

constexpr size_t kTailBytes = 64 * 1024;
/// An event line longer than this is not the worker's: dropped, so memory stays bounded.
constexpr size_t kMaxEventBytes = 16 * 1024 * 1024;
/// worker.cpp's exit status when its event pipe is gone.
constexpr int kExitLostEvents = 120;
constexpr const char* kMemoryLimitVar = "DLPV_MEMORY_LIMIT_MIB";

}  // namespace

unsigned long long memory_limit_mib() {
  if (const char* text = std::getenv(kMemoryLimitVar); text && *text) {
    char* end = nullptr;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (!*end) return v;
  }
  unsigned long long bytes = static_cast<unsigned long long>(sysconf(_SC_PHYS_PAGES)) *
                             static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  unsigned long long cg_bytes = 0;
  if (cg >> cg_bytes && cg_bytes > 0 && cg_bytes < bytes) bytes = cg_bytes;
  return std::max<unsigned long long>(bytes / 2 >> 20, 1024);
}

namespace {

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{} ({})", abbrev, sig) : fmt::format("signal {}", sig);
}

int dup_high(int fd) {
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

/// The covers this process found while it made its cases' records, in a memory file made at the
/// first spawn and handed to every worker at kCoversFd; -1 when it cannot be made (each worker
/// then computes its own). Every record is made first (Registry::cases; the records are made
/// lazily, Registry::add_lazy), so the memo holds every cover a worker can want.
int covers_file() {
  static const int fd = [] {
    (void)Registry::instance().cases();
    const int made = memfd_create("dlpack-validate-covers", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (made < 0) return -1;
    const int high = dup_high(made);
    const std::string text = cover::memo_text();
    size_t done = 0;
    while (high >= 0 && done < text.size()) {
      const ssize_t n = write(high, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    // Sealed: the reader takes only a descriptor sealed so (cover::memo), never a stray fd 5.
    if (high >= 0 && (done < text.size() || fcntl(high, F_ADD_SEALS, cover::kCoversSeals) != 0)) {
      close(high);
      return -1;
    }
    return high;
  }();
  return fd;
}

}  // namespace

namespace {

/// The worker's four pipes, each end moved above the fixed descriptor numbers so that the
/// child's dup2 calls never collide with one.
struct Pipes {
  int ctl[2] = {-1, -1}, evt[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};

  bool open(std::string& why) {
    if (pipe2(ctl, O_CLOEXEC) || pipe2(evt, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) {
      why = std::string("pipe: ") + std::strerror(errno);
      return false;
    }
    for (int* fd : {&ctl[0], &ctl[1], &evt[0], &evt[1], &out[0], &out[1], &err[0], &err[1]}) *fd = dup_high(*fd);
    return true;
  }
};

/// posix_spawn's settings for a worker: stdin /dev/null, stdout and stderr to their pipes, the
/// command and event pipes at the protocol's numbers; its own process group; every signal at
/// its default and none blocked.
struct SpawnSettings {
  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;

  explicit SpawnSettings(const Pipes& p) {
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&files, p.out[1], 1);
    posix_spawn_file_actions_adddup2(&files, p.err[1], 2);
    posix_spawn_file_actions_adddup2(&files, p.ctl[0], protocol::kCommandFd);
    posix_spawn_file_actions_adddup2(&files, p.evt[1], protocol::kEventFd);
    if (covers_file() >= 0) posix_spawn_file_actions_adddup2(&files, covers_file(), protocol::kCoversFd);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
  }
  ~SpawnSettings() {
    posix_spawn_file_actions_destroy(&files);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSettings(const SpawnSettings&) = delete;
  SpawnSettings& operator=(const SpawnSettings&) = delete;
};

bool named(const char* entry, const char* var) {
  const size_t n = std::strlen(var);
  return std::strncmp(entry, var, n) == 0 && entry[n] == '=';
}

/// The thread pools a library under test may start at its import (OpenBLAS, MKL, OpenMP), each
/// sized to every core by default, and spinning a while after it starts and after each task:
/// a run holds several workers at once, so each worker gets one thread per pool unless the
/// user's environment sizes the pool. No DLPack exchange uses them. NumPy's run beside NumPy's
/// own tests: 1.32 s -> 1.18 s; PyTorch's: 7.8 s -> 7.0 s, every status the same.
constexpr const char* kThreadPoolVars[] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"};

/// The worker's environment: ours without the variables the worker takes from its parent only,
/// then those, as this spawn sets them (the memory limit it applies to itself, lazy loading, the
/// subjects to preload, the load steps to leave out), and one thread per pool where ours does not
/// size the pool (kThreadPoolVars).
std::vector<std::string> worker_environment(unsigned long long memory_limit_mib, bool lazy,
                                            const std::vector<int>& preload, const std::string& skip_steps) {
  std::vector<std::string> env;
#ifdef DLPV_UNDER_ASAN
  // A sanitizer build: the library's crashes must still kill the worker with their signal
  // (ASan would catch SIGSEGV and exit 1), and a sanitizer report in the worker must be a
  // crash (SIGABRT, report in the output tail), not "exited with status 1". The user's own
  // ASAN_OPTIONS come after ours and win.
  const char* user_asan = std::getenv("ASAN_OPTIONS");
  env.push_back(std::string("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0:handle_sigfpe=0:"
                            "handle_sigill=0:abort_on_error=1:detect_leaks=0") +
                (user_asan && *user_asan ? std::string(":") + user_asan : std::string()));
#endif
  for (char** e = environ; e && *e; ++e) {
    if (named(*e, kMemoryLimitVar) || named(*e, "DLPV_WORKER_LAZY") || named(*e, "DLPV_WORKER_PRELOAD") ||
        named(*e, kSkipStepsVar) || named(*e, cover::kCoversFdVar))
      continue;
#ifdef DLPV_UNDER_ASAN
    if (named(*e, "ASAN_OPTIONS")) continue;
#endif
    env.emplace_back(*e);
  }
  for (const char* pool : kThreadPoolVars)
    if (!std::getenv(pool)) env.push_back(std::string(pool) + "=1");
  env.push_back(std::string(kMemoryLimitVar) + "=" + std::to_string(memory_limit_mib));
  if (lazy) env.emplace_back("DLPV_WORKER_LAZY=1");
  if (lazy && !preload.empty()) {
    std::string list = "DLPV_WORKER_PRELOAD=";
    for (size_t i = 0; i < preload.size(); ++i) list += (i ? "," : "") + std::to_string(preload[i]);
    env.push_back(list);
  }
  if (!skip_steps.empty()) env.push_back(std::string(kSkipStepsVar) + "=" + skip_steps);
  if (covers_file() >= 0) env.push_back(std::string(cover::kCoversFdVar) + "=" + std::to_string(protocol::kCoversFd));
  return env;
}

/// A NULL-terminated array of pointers into `strings` (which must outlive it).
std::vector<char*> c_array(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

bool WorkerProcess::spawn(const std::vector<std::string>& command, const std::vector<std::string>& subjects,
                          unsigned long long memory_limit_mib, std::string& err, bool lazy,
                          const std::vector<int>& preload, const std::string& skip_steps) {
  Pipes p;
  if (!p.open(err)) return false;
  std::vector<std::string> args = command;
  args.push_back("--internal-worker");
  args.insert(args.end(), subjects.begin(), subjects.end());
  std::vector<std::string> env = worker_environment(memory_limit_mib, lazy, preload, skip_steps);
  std::vector<char*> argv = c_array(args), envp = c_array(env);
  int rc;
  {
    SpawnSettings settings(p);
    rc = posix_spawn(&pid_, command.front().c_str(), &settings.files, &settings.attr, argv.data(), envp.data());
  }
  // The child's ends are the child's; ours are kept whether or not it started (kill_and_reap
  // closes them).
  close(p.ctl[0]);
  close(p.evt[1]);
  close(p.out[1]);
  close(p.err[1]);
  ctl_ = p.ctl[1];
  evt_ = p.evt[0];
  out_ = p.out[0];
  err_ = p.err[0];
  if (rc != 0) {
    pid_ = -1;
    err = std::string("cannot start worker: ") + std::strerror(rc);
    return false;
  }
  pgid_ = pid_;
  // A descriptor that becomes readable when the worker exits, so reaping waits on the exit
  // itself rather than polling at a fixed interval.
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd_ >= 0) fcntl(pidfd_, F_SETFD, FD_CLOEXEC);
  // The first command, read before anything is loaded: the nonce the loading events and the
  // hello echo, so that a line the library writes while it loads is told from the worker's.
  load_nonce_ = protocol::make_nonce();
  send("load " + load_nonce_ + "\n");
  return true;
}

bool WorkerProcess::send(const std::string& line) {
  if (ctl_ < 0) return false;
  // A worker that died while idle has closed its end: the write fails with EPIPE and the
  // kernel raises SIGPIPE, whose default action would end the supervisor. Block it here (this
  // thread only), and consume the one the write raised, unless one was pending before.
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  sigset_t pending_before;
  sigpending(&pending_before);
  const bool was_pending = sigismember(&pending_before, SIGPIPE) == 1;
  const char* p = line.data();
  size_t left = line.size();
  bool ok = true;
  while (left > 0) {
    ssize_t w = write(ctl_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ok = false;
      break;
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (!ok && !was_pending) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) < 0 && errno == EINTR) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

WorkerProcess::Wait WorkerProcess::next_line(std::string& line, Clock::time_point deadline) {
  for (;;) {
    size_t nl = buf_.find('\n');
    if (nl != std::string::npos) {
      line = buf_.substr(0, nl);
      buf_.erase(0, nl + 1);
      return Wait::event;
    }
    if (evt_eof_) return Wait::eof;
    if (pid_ < 0) {
      // The worker is gone but someone (a child the library forked) still holds the
      // pipe: take what the worker wrote, then treat the pipe as closed.
      while (pump(0) > 0) {}
      if (buf_.find('\n') == std::string::npos) evt_eof_ = true;
      continue;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Wait::timeout;
    if (pump(static_cast<int>(std::min<long long>(left, 100))) == 0) try_reap();
  }
}

WorkerProcess::Wait WorkerProcess::next(nlohmann::json& ev, Clock::time_point deadline) {
  for (;;) {
    std::string line;
    const Wait w = next_line(line, deadline);
    if (w != Wait::event) return w;
    ev = nlohmann::json::parse(line, nullptr, false);
    if (ev.is_discarded() || !ev.is_object()) continue;  // not ours; ignore
    return Wait::event;
  }
}

WorkerProcess::Idle WorkerProcess::check_idle(std::string& what) {
  while (!evt_eof_ && pump(0) > 0) {}
  bool exited = false;
  if (buf_.empty() && !evt_eof_ && pid_ > 0 && try_reap()) {  // a forked child may hold its pipe
    exited = true;
    while (pump(0) > 0) {}
  }
  if (!buf_.empty()) {
    what = buf_.substr(0, 200);
    return Idle::data;
  }
  return evt_eof_ || exited ? Idle::gone : Idle::quiet;
}

int WorkerProcess::reap(int grace_ms) {
  auto until = Clock::now() + std::chrono::milliseconds(grace_ms);
  while (pid_ > 0) {
    if (try_reap()) break;
    if (Clock::now() > until) {  // closed its fds but keeps running: end it
      kill(-pgid_, SIGKILL);
      wait_for(0);
      break;
    }
    // Output first; once every pipe is closed, wait on the exit itself.
    if (evt_ >= 0 || out_ >= 0 || err_ >= 0) {
      pump(20);
    } else if (pidfd_ >= 0) {
      pollfd p{pidfd_, POLLIN, 0};
      poll(&p, 1, 20);
    } else {
      usleep(1000);
    }
  }
  kill_leftovers();
  pump(0);
  return status_;
}

void WorkerProcess::kill_and_reap() {
  if (pid_ > 0) {
    kill(-pgid_, SIGKILL);
    kill(pid_, SIGKILL);
    wait_for(0);
  }
  kill_leftovers();
  for (int* fd : {&ctl_, &evt_, &out_, &err_, &pidfd_})
    if (*fd >= 0) { close(*fd); *fd = -1; }
}

bool WorkerProcess::sched(double& on_cpu_s, double& waiting_s) const {
  if (pid_ <= 0) return false;
  std::ifstream in(fmt::format("/proc/{}/schedstat", pid_));
  unsigned long long run_ns = 0, wait_ns = 0;
  if (!(in >> run_ns >> wait_ns)) return false;
  on_cpu_s = static_cast<double>(run_ns) * 1e-9;
  waiting_s = static_cast<double>(wait_ns) * 1e-9;
  return true;
}

long proc_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  long value = 0;
  while (in >> k) {
    if (k == key && in >> value) return value;
    in.ignore(4096, '\n');
  }
  return 0;
}

long WorkerProcess::rss_kib() const { return pid_ > 0 ? proc_value(fmt::format("/proc/{}/status", pid_), "VmRSS:") : 0; }

bool WorkerProcess::channels_intact(std::string& why) const {
  if (pid_ <= 0) return true;
  const struct { int here; int there; const char* name; } channels[] = {
      {ctl_, protocol::kWorkerCommandFd, "command"}, {evt_, protocol::kWorkerEventFd, "event"}};
  for (const auto& c : channels) {
    if (c.here < 0) continue;
    struct stat st {};
    if (fstat(c.here, &st) != 0) continue;
    const std::string path = "/proc/" + std::to_string(pid_) + "/fd/" + std::to_string(c.there);
    char target[256];
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    if (n < 0) {
      if (errno == ENOENT) {
        why = "its " + std::string(c.name) + " fd " + std::to_string(c.there) + " was closed";
        return false;
      }
      continue;  // /proc not readable here: nothing to compare
    }
    target[n] = 0;
    const std::string want = "pipe:[" + std::to_string(static_cast<unsigned long long>(st.st_ino)) + "]";
    if (want != target) {
      // No inode numbers in the words: they differ from run to run, the finding does not.
      const std::string now = std::string(target).rfind("pipe:", 0) == 0 ? "another pipe" : std::string(target);
      why = "its " + std::string(c.name) + " fd " + std::to_string(c.there) + " is now " + now +
            ", not the pipe the supervisor gave it";
      return false;
    }
  }
  return true;
}

void WorkerProcess::close_commands() {
  if (ctl_ >= 0) { close(ctl_); ctl_ = -1; }
}

bool WorkerProcess::try_reap() { return pid_ < 0 || wait_for(WNOHANG); }

bool WorkerProcess::wait_for(int flags) {
  int status = 0;
  rusage ru{};
  pid_t r;
  do r = wait4(pid_, &status, flags, &ru); while (r < 0 && errno == EINTR);
  if (r != pid_) return false;
  status_ = status;
  max_rss_kib_ = ru.ru_maxrss;
  pid_ = -1;
  if (pidfd_ >= 0) {
    close(pidfd_);
    pidfd_ = -1;
  }
  return true;
}

void WorkerProcess::kill_leftovers() {
  if (pid_ < 0 && pgid_ > 0) {
    kill(-pgid_, SIGKILL);
    pgid_ = -1;
  }
}

size_t WorkerProcess::pump(int timeout_ms) {
  pollfd fds[3] = {{evt_, POLLIN, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
  int n = poll(fds, 3, timeout_ms);
  if (n <= 0) return 0;
  size_t event_bytes = 0;
  char chunk[65536];
  for (int i = 0; i < 3; ++i) {
    if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    ssize_t r = read(fds[i].fd, chunk, sizeof chunk);
    if (r > 0) {
      if (i == 0) {
        event_bytes += static_cast<size_t>(r);
        buf_.append(chunk, static_cast<size_t>(r));
        if (buf_.size() > kMaxEventBytes && buf_.find('\n') == std::string::npos) {
          buf_.clear();  // a runaway line is not a protocol event: keep memory bounded
          buf_ = "\x01";  // and make sure its remainder cannot parse as one
        }
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
  return event_bytes;
}



std::string death_text(int status, std::string* signal_out, long max_rss_kib,
                       unsigned long long limit_mib) {
  std::string text;
  if (WIFSIGNALED(status)) {
    *signal_out = signal_text(WTERMSIG(status));
    text = "killed by " + *signal_out;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == kExitLostEvents) {
    text = fmt::format("the worker lost its event pipe and exited with status {} (did the "
                       "library close or take over file descriptors it does not own?)",
                       kExitLostEvents);
  } else if (WIFEXITED(status)) {
    text = fmt::format("the worker exited with status {} (exit() called by the library?)",
                       WEXITSTATUS(status));
  } else {
    text = "the worker ended abnormally";
  }
  // A failed allocation rarely says so: a crash near the limit is most likely one.
  const unsigned long long peak_mib = static_cast<unsigned long long>(max_rss_kib) >> 10;
  if (limit_mib > 0 && peak_mib * 2 >= limit_mib)
    text += fmt::format(" after using {} MiB of its {} MiB memory limit (out of memory? "
                        "the limit is {}=N, 0 for none)", peak_mib, limit_mib, kMemoryLimitVar);
  return text;
}


}  // namespace dlpv
