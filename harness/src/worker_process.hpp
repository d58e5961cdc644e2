// harness/src/worker_process.hpp: one worker process seen from the parent: spawn (exec,
// own process group, memory limit, stdout/stderr captured into a bounded tail), commands on
// its fd 3, events from its fd 4, reaping with the exit status and peak memory. Used by the
// supervisor (cases) and by the bench.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace dlpv {

/// The workers' memory limit in MiB (0 = none): $DLPV_MEMORY_LIMIT_MIB when set, else half
/// of the memory this machine (or its cgroup) has, at least 1 GiB.
unsigned long long memory_limit_mib();

/// "killed by SIGSEGV (11)", "the worker exited with status 3 ...", with a note when the
/// worker's peak memory was near its limit. Fills *signal_out for deaths by signal.
std::string death_text(int status, std::string* signal_out, long max_rss_kib,
                       unsigned long long limit_mib);

/// The number after `key` ("VmRSS:", "MemAvailable:") in a /proc file of `key value` lines
/// (/proc/PID/status, /proc/meminfo): KiB there. 0 where the file or the key cannot be read.
long proc_value(const std::string& path, const std::string& key);

class WorkerProcess {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Wait { event, eof, timeout };

  ~WorkerProcess() { kill_and_reap(); }

  /// `lazy`: the worker loads each subject when a case first needs it, not all at start (the
  /// supervisor already knows the subjects from an earlier worker; after a crash only what the
  /// next cases need is imported again). `preload` (lazy only): the subjects it loads before
  /// its hello, in this order (a spare started ahead of the case that will need them).
  /// (The case's time limit travels in each `run` command, not in the environment.)
  /// `skip_steps`: the optional load steps it must leave out (kSkipStepsVar), comma separated.
  bool spawn(const std::vector<std::string>& command, const std::vector<std::string>& subjects,
             unsigned long long memory_limit_mib, std::string& err, bool lazy = false,
             const std::vector<int>& preload = {}, const std::string& skip_steps = {});
  /// Write a command. False when the worker is gone (EPIPE): SIGPIPE is blocked for the
  /// write and a pending one consumed, so a dead worker never kills the caller.
  bool send(const std::string& line);
  /// Next event, or eof (worker closed its event fd / died), or timeout at the deadline.
  /// Lines that are not JSON objects are skipped (the bench's tolerant reading).
  Wait next(nlohmann::json& ev, Clock::time_point deadline);
  /// Next raw line from the event fd (without its newline), or eof, or timeout: the
  /// supervisor's strict reading, where any line not ours is a protocol violation.
  Wait next_line(std::string& line, Clock::time_point deadline);
  enum class Idle { quiet, data, gone };
  /// Between commands: nothing may arrive. Reads what is there without waiting; `data`
  /// (with the first bytes in `what`) when the worker wrote something unasked, `gone`
  /// when its event fd closed (it died, or closed the pipe).
  Idle check_idle(std::string& what);
  /// After EOF on the event fd: collect the remaining output briefly, then the exit status.
  int reap(int grace_ms = 2000);
  void kill_and_reap();
  void close_commands();
  /// Peak resident memory of the (reaped) worker, in KiB.
  long max_rss_kib() const { return max_rss_kib_; }
  bool alive() const { return pid_ > 0 && !evt_eof_; }
  /// Time the worker's main thread has spent on a core and waiting for one while runnable (no
  /// core free), in seconds since it started (/proc/PID/schedstat). False where unreadable.
  bool sched(double& on_cpu_s, double& waiting_s) const;
  /// The live worker's resident memory in KiB (/proc/PID/status VmRSS); 0 where unreadable.
  long rss_kib() const;
  /// The worker's command and event fds (500 and 501, where it moves them before loading
  /// anything) are still the pipes this supervisor made for
  /// it (by their inodes, as /proc/PID/fd shows them). False, with `why`, when the library put
  /// something else there: a relay that reads the worker's own events (nonces included) could
  /// then forge any result. True where /proc cannot be read (nothing to compare).
  bool channels_intact(std::string& why) const;
  void clear_tail() { tail_.clear(); }
  /// Event bytes read from the worker and not taken as a line yet: after the worker was told to
  /// stop and reaped, anything here is what it wrote after its last event.
  const std::string& unread_events() const { return buf_; }
  const std::string& tail() const { return tail_; }
  /// The nonce of the `load NONCE` command spawn sends first: the loading events and the hello
  /// echo it.
  const std::string& load_nonce() const { return load_nonce_; }

 private:
  bool try_reap();
  bool wait_for(int flags);
  void kill_leftovers();
  size_t pump(int timeout_ms);

  pid_t pid_ = -1, pgid_ = -1;
  int pidfd_ = -1;  ///< readable when the worker has exited (Linux 5.3+; -1: poll in 1 ms steps)
  int ctl_ = -1, evt_ = -1, out_ = -1, err_ = -1;
  int status_ = 0;
  long max_rss_kib_ = 0;
  bool evt_eof_ = false;
  std::string buf_, tail_;
  std::string load_nonce_;
};

}  // namespace dlpv
