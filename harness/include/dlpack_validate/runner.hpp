// harness/include/dlpack_validate/runner.hpp: running selected cases against subjects,
// in reusable worker processes (docs/design.md §7), one process per case, or in-process.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>

#include <functional>
#include <string>
#include <vector>

namespace dlpv {

enum class Isolation { worker, per_case, none };
const char* to_string(Isolation i);

struct RunOptions {
  std::vector<std::string> subject_paths;
  std::vector<std::string> filters;  ///< globs over case ids; empty = all
  double timeout_s = kDefaultCaseTimeoutS;
  /// Loading a subject in a worker (dlopen or import, and the load checks) has its own
  /// deadline, apart from case time: a slow import is not a case's timeout.
  double load_timeout_s = kDefaultLoadTimeoutS;
  Isolation isolation = Isolation::worker;
  /// Cases run at once (--jobs): lanes, each with its own workers, taking the planned cases
  /// from one queue; 0: one per core this process may use. The report's order and every
  /// status are those of 1. Fewer lanes are used when the cases are few, or when the memory
  /// available would not hold that many workers (RunResult::lanes_why says so).
  int jobs = 1;
  /// Command that starts a worker; "--internal-worker" and the subject specs are appended
  /// (the CLI: {/proc/self/exe}; the Python shim: {python, -m, validator}).
  std::vector<std::string> worker_command;
  /// Loads a subject (in workers, and in-process with Isolation::none).
  SubjectLoader loader;
  /// Kind of the subjects ("plugin", "python"): what a subject that never loaded is taken to
  /// be when its cases are listed as not run.
  std::string subject_kind = "plugin";
  /// Called before each case runs (`running` names it) and once at the end (`running` empty):
  /// cases done so far and in all.
  std::function<void(size_t done, size_t total, const std::string& running)> progress;
  /// -x/--exitfirst: asked after each result; true ends the run there, and the cases left are
  /// listed once as not run (the reason names the result that stopped it).
  std::function<bool(const std::vector<SubjectInfo>& subjects, const struct CaseResult& result)> stop_after;
  /// Asked (at most once per case) whether the user's baseline expects this case to crash or
  /// time out: such a case runs in a side worker, so that the main worker, with every subject
  /// loaded, survives it (a scheduling choice only: the case's result is the same).
  std::function<bool(const std::vector<SubjectInfo>& subjects, const struct CaseResult& planned)> expect_death;
};

struct CaseResult {
  const CaseInfo* info = nullptr;
  int subject = 0;
  int peer = -1;  ///< pair cases: the consumer subject
  CaseOutcome outcome;
};

/// Something that went wrong with no case in flight (a worker that died, hung or broke the
/// protocol while idle, before it accepted a command, or while a fresh worker loaded the
/// subject again): charged to no case, listed in every report, unexpected.
struct Incident {
  std::string kind;     ///< "died", "unresponsive", "protocol", "intrusion" (the library wrote into the event pipe)
  std::string message;  ///< what happened, in words
  std::string signal;   ///< "SIGKILL (9)" for deaths by signal
  std::string next_case;  ///< the case the supervisor was about to run (it was then run again)
  int subject = -1;
  std::string output_tail;
};

/// Cases that were never run, reported once: the subject crashes at load, or its workers
/// kept dying on their own before any case could run.
struct NotRun {
  int subject = -1;  ///< -1: every subject
  std::string reason;
  std::vector<std::string> cases;  ///< "ID" or "ID@S" / "ID@S->P" when several subjects
};

struct RunResult {
  std::vector<SubjectInfo> subjects;
  std::vector<CaseResult> results;
  std::vector<Incident> incidents;
  std::vector<NotRun> not_run;
  double duration_s = 0.0;
  std::string started_at;  ///< ISO 8601 UTC
  int workers_started = 0;  ///< every worker started, spares included
  int spares_unused = 0;    ///< spares ended without serving a case (a prediction that did not come true)
  /// Optional load steps every worker of the run leaves out (they killed the first workers:
  /// kSkipStepsVar), comma separated; set while the subjects are first loaded, read by every pool.
  std::string left_out_steps;
  double load_wait_s = 0;   ///< time the supervisor waited for workers to load (hellos), the first included
  long supervisor_max_rss_kib = 0;  ///< peak resident memory of the supervisor process
  int jobs = 1;           ///< lanes asked for (--jobs; 0 resolved to the cores)
  int lanes = 1;          ///< lanes used
  std::string lanes_why;  ///< why fewer lanes than asked for (empty: as asked, or few cases)
  int confirmations = 0;  ///< timeouts run again alone (in parallel with the run)
  int hangs_known = 0;    ///< timeouts not run again: the subject's hang in that phase had reproduced
};

/// Which cases a run takes: --filter, --exclude and --requirement.
struct Selection {
  std::vector<std::string> filters;       ///< globs over case ids; empty = all
  std::vector<std::string> excludes;      ///< globs over case ids to leave out
  std::vector<std::string> requirements;  ///< checklist ids (globs): a case citing one is kept
  std::vector<std::string> keywords;      ///< -k expressions (keyword_match): a case must match every one
};

/// pytest's -k habit over a case id: each word is a substring of the id (case-insensitive);
/// words combine with `and`, `or`, `not` and parentheses (`not` binds tightest, then `and`).
/// Throws std::invalid_argument, naming what is wrong, for a malformed expression.
bool keyword_match(const std::string& expression, const std::string& id);
/// Whether the selection takes case `c` (also a point of a covered space that is not in the cover).
bool selection_keeps(const Selection& selection, const CaseInfo& c);
/// The selected cases, in id order.
std::vector<const CaseInfo*> select_cases(const Selection& selection);
inline std::vector<const CaseInfo*> select_cases(const std::vector<std::string>& filters) {
  return select_cases(Selection{filters, {}, {}, {}});
}

/// Run every selected case on every subject. Throws SubjectLoadError when a subject cannot
/// be loaded cleanly (bad input: exit code 2).
RunResult run_cases(const RunOptions& options, const std::vector<const CaseInfo*>& cases);

/// The bench (docs/design.md §11) in a worker the supervisor starts and watches as it does for cases
/// (spawn, load, nonce-checked events, deaths and hangs): the worker's bench section as JSON
/// text, or {"error": "..."} when the worker died, hung or broke the protocol. Fills
/// run.subjects (and run.incidents, e.g. a worker that does not exit cleanly afterwards).
/// Throws SubjectLoadError when a subject cannot be loaded cleanly.
std::string bench_in_worker(const RunOptions& options, const std::string& settings_json, double route_timeout_s,
                            RunResult& run);

/// The current UTC time as the run record writes it (ISO 8601).
std::string iso_now();

/// Why `info` cannot run on a subject described by `s` (a need its probed capabilities rule
/// out, with the subject's own reason where it gave one), or empty. The supervisor asks it
/// before starting any process for a case (docs/design.md §7: a skip costs no worker), and
/// run_case_in_process asks it again, so both isolation paths skip with the same words.
std::string missing_need(const CaseInfo& info, const SubjectInfo& s);

/// The outcome of a case skipped before its body ran (what run_case_in_process returns then,
/// apart from the duration).
CaseOutcome skipped_outcome(const std::string& reason);

/// Run one case in this process (what a worker does per case). Missing capabilities and a
/// legacy-only subject turn into reasoned skips here.
CaseOutcome run_case_in_process(const CaseInfo& info, Subject& subject,
                                const CaseContext::PhaseHook& hook, Subject* peer = nullptr);

/// Entry point of a worker process: `WORKER_COMMAND --internal-worker SUBJECT...`; `specs`
/// are the subjects after that flag. Reads commands on fd 3 and writes events on fd 4.
int worker_main(const std::vector<std::string>& specs, const SubjectLoader& loader);

}  // namespace dlpv
