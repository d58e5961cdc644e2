// harness/src/case_exchange.hpp: one conversation with one worker (docs/protocol.md): its hello
// under the load budget, one `run` command under the phase budgets, one `bench` command under a
// per-route silence limit. What the worker says is believed only in its own order: every event
// of a command echoes the command's nonce and its place in the sequence (`seq`), and a result
// is taken only where that sequence allows one. The exchange neither chooses nor replaces
// workers: it says how the conversation ended, and the worker pool acts on that.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "worker_process.hpp"

namespace dlpv::exchange {

using Clock = std::chrono::steady_clock;

/// The time one command may take, in two pots: loading (a fresh worker loading a subject before
/// the case, or a case's helper process importing the library: phases `load` and `loading`) and
/// the case itself (every other phase). Each moment is charged to the pot of the phase the
/// worker last announced; no event refills a pot, so a command ends by load_s + case_s
/// whatever the worker writes (an absolute ceiling).
class PhaseClock {
 public:
  PhaseClock(double load_s, double case_s, Clock::time_point start);
  /// The worker announced `phase` at `now`.
  void enter(const std::string& phase, Clock::time_point now);
  Clock::time_point deadline() const;

  static bool is_loading_phase(const std::string& phase);

 private:
  Clock::duration left_[2];  ///< [0] the case's time, [1] loading time
  Clock::time_point since_;
  bool loading_ = false;
};

struct LoadStep {
  int subject = -1;
  std::string step;
};

/// The words of a loader step ("importing the package", "checking its first export ...").
std::string step_words(const std::string& step);
/// The requirement a death at that step breaks (the load checks exercise the library's own DLPack code).
std::vector<std::string> step_requirements(const std::string& step);
/// A load step that only decides a fact for the cases (a consumer's load check with a capsule it did
/// not ask for, or a plain tensor): a death there is kept as that check's result and the run
/// goes on with the step left out, instead of losing every case of the release.
bool step_is_optional(const std::string& step);
/// A line for a message: printable, at most 120 bytes, quoted.
std::string quote_line(const std::string& line);

struct Budget {
  double load_s = 0;
  double case_s = 0;  ///< --timeout (or twice it) times `pace`
  double pace = 1.0;  ///< the subject's pace (PaceMeter): above 1, the timeout's message says so
};

/// How a `run` command ended.
enum class End {
  result,       ///< the worker's own result, in `outcome`
  violation,    ///< after acceptance, a line naming the nonce out of sequence or malformed: `outcome` is the case's error
  crash,        ///< the worker died in the case: `outcome` is the crash (phase, signal)
  timeout,      ///< a pot ran out: `outcome` is the timeout; the worker was killed
  load_death,   ///< died while a fresh worker loaded a subject again, before the case began: an incident
  not_accepted  ///< died, hung or spoke out of turn before it accepted the command: an incident
};

struct Reply {
  End end = End::not_accepted;
  CaseOutcome outcome;
  /// For load_death and not_accepted: the incident's kind ("died", "unresponsive", "protocol"),
  /// words and signal.
  std::string kind, message, signal;
  /// For not_accepted of kind "protocol": the line written instead of the acknowledgement.
  std::string line;
  /// Lines the library wrote into the event pipe while the case ran (they carry no nonce of
  /// this command, or came in front of one of the worker's lines): not believed, counted, the
  /// first kept. The case's own events, which name the nonce, still decide how it ended.
  size_t intruded = 0;
  std::string first_intrusion;
};

/// `run NONCE SUBJECT CASE PEER LIMIT_S`: the case's time travels in the command.
std::string run_command(const std::string& nonce, int subject, const std::string& case_id, int peer, double case_s);

/// Send one case to `worker` and follow it to its end. After a violation, a timeout or a death
/// the worker is dead (killed or reaped); its output tail stays in `worker.tail()`.
Reply run(WorkerProcess& worker, int subject, const std::string& case_id, int peer, Budget budget,
          unsigned long long memory_limit_mib);

/// How a worker's start ended: its hello (the subjects it describes), a clean load error
/// (`load_error`: bad input), or a failure while loading (`failure`: crash, timeout or protocol
/// error, with the step in `failed`).
struct Hello {
  bool ok = false;
  bool load_error = false;
  std::string load_error_message;
  std::vector<SubjectInfo> subjects;
  CaseOutcome failure;
  LoadStep failed;
  /// Lines the library wrote into the event pipe while the worker loaded (no load nonce), and
  /// the load step the first came in.
  size_t intruded = 0;
  std::string first_intrusion;
  LoadStep intruded_at;
};
Hello await_hello(WorkerProcess& worker, double load_s, unsigned long long memory_limit_mib);

/// `bench NONCE SETTINGS`: the worker's bench section as JSON text, or {"error": ...} when it
/// died, fell silent for `route_timeout_s` or wrote a line not of this bench (then nothing it
/// sent is believed). `ok` tells which; the worker is dead unless ok.
std::string bench(WorkerProcess& worker, const std::string& settings_json, double route_timeout_s,
                  unsigned long long memory_limit_mib, bool& ok);

/// The verdict "worker protocol violated: WHAT ..." for the case (or load) in flight.
CaseOutcome violation(const std::string& what, const std::string& phase, Clock::time_point t0);

}  // namespace dlpv::exchange
