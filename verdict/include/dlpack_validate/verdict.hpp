// SPDX-License-Identifier: Apache-2.0
// dlpack_validate/verdict.hpp: the verdict over a finished run record.
//
// What a record means, apart from how it is shown: reading a saved record, the summary and exit
// code (finalize_summary), which library a result is charged to (charge_of), baselines (expected
// failures: loading, asking one about a result, applying one to a record, proposing one) and
// the bench's regression judgement. The writers (reports/) render what this layer decided; the
// application (app/) asks it, never a writer. Nothing here runs a case, loads a subject or reads
// the clock.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlpack_validate/ids.hpp"

namespace dlpv::verdict {

/// The one glob matcher (dlpack_validate/ids.hpp), for --filter and baseline entries alike.
using dlpv::glob_match;

/// Bad input supplied by the user (unreadable or malformed baseline or run record).
/// The message is one line, suitable for printing as-is before exiting with status 2,
/// e.g. "baseline 'known.json': not valid JSON at line 3".
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------
// Run records
// ---------------------------------------------------------------------------------------

/// Reads a saved run record. Throws BadInput when the file cannot be read, is not JSON, is
/// not an object with schema "dlpack-validate/run", has a schema_version other than 1, or
/// lacks the `subjects`/`results` arrays.
nlohmann::ordered_json load_run(const std::string& path);

/// Recomputes run["summary"] from run["results"], run["options"]["strict"] and
/// run["baseline_report"]:
///   total, counts (all nine statuses, always present, in the canonical order),
///   unexpected  = fail + crash + timeout + error
///                 (+ warn + xpass + number of stale baseline entries when strict),
///   verdict     = "pass" when unexpected == 0, else "fail",
///   exit_code   = 0 or 1 accordingly.
/// A result whose status is not one of the nine is counted as "error": a record that cannot
/// say what happened must not pass.
/// A record holding a "pair_matrix" has it recounted from its results too (pair_matrix), so a
/// record, the same record judged with a baseline and a merge of it count pairs alike.
void finalize_summary(nlohmann::ordered_json& run);

/// The producer x consumer matrix of the pair results (those with a "peer"): one cell per
/// ordered (subject, peer) pair, in index order, counting each status there:
/// [{"producer": P, "consumer": C, "counts": {STATUS: N, ...}}, ...].
nlohmann::ordered_json pair_matrix(const nlohmann::ordered_json& results);

/// The library a result is charged to (docs/results.md, "Which library is charged").
/// A single-subject result: its subject (`side` "subject"). A pair result: the side whose
/// behaviour broke the rule, `side` "producer" or "consumer" with that subject's index:
///   - the first failed check (a fail before a warn) that names its side (`party`);
///   - else, for a result that ended before its checks judged (crash, timeout, error, or such
///     a result waived by a baseline), the phase it ended in: export or inspect -> producer,
///     import or read -> consumer;
///   - else nobody alone (`subject` -1, `side` ""): a pass, a skip, a check that cannot tell
///     the sides apart, a death in release (the consumer's release runs the producer's deleter).
struct Charge {
  long long subject = -1;
  std::string side;
};
Charge charge_of(const nlohmann::ordered_json& run, const nlohmann::ordered_json& result);

/// A pair result's charge in words: "charged to torch 2.13.0+cpu (the consumer)", or "charged to
/// neither side alone" for a finding no side can be singled out for; "" for single-subject
/// results and for pair results that found nothing (pass, skip, xpass).
std::string charge_text(const nlohmann::ordered_json& run, const nlohmann::ordered_json& result);

// ---------------------------------------------------------------------------------------
// Baselines (expected failures)
// ---------------------------------------------------------------------------------------

/// One entry of a baseline file:
///   {"case": "deleter.*", "expect": "fail", "reason": "...", "issue": "https://...",
///    "when": {"subject": "numpy*", "dlpack_version": "1.*"}}
/// `case` and the `when` values are fnmatch-style globs (`*`, `?`, `[...]`, `\` escapes);
/// an absent `when` key matches everything. A subject/producer/consumer glob matches the
/// subject's name ("numpy 2.1.0") or the name without its trailing version word ("numpy").
struct BaselineEntry {
  std::string case_glob;
  std::string expect;       ///< fail | warn | crash | timeout | error | skip | unexpected (any of the first five)
  std::string reason;       ///< required, non-empty
  std::string issue;        ///< optional URL ("" when absent)
  /// optional: the command (a script of the repository and its arguments) that shows the
  /// finding outside the validator; CTest runs it against the pinned library
  std::string confirmed_by;
  /// optional "strict": true: a pass of a case this entry expects to fail is unexpected (an
  /// xpass that fails the run) even without --strict; pytest's strict xfail (docs/pytest.md)
  bool strict = false;
  /// optional "intermittent": true: the finding shows in most runs, not in every one (undefined
  /// behaviour, such as a deleter that runs freed code after Py_Finalize: a crash, a hang, or now
  /// and then nothing). A run where its case passes records a pass with the entry attached, not
  /// an xpass, so neither --strict nor the entry's staleness turns that luck into a failure.
  /// Not with "strict": true.
  bool intermittent = false;
  bool has_subject = false;
  std::string subject_glob;
  bool has_dlpack_version = false;
  std::string dlpack_version_glob;
  /// pair cases only: the producer's / consumer's subject name (an entry with either never
  /// matches a case of another role)
  bool has_producer = false;
  std::string producer_glob;
  bool has_consumer = false;
  std::string consumer_glob;
  nlohmann::ordered_json raw;  ///< the entry as written, for stale-entry reports
};

/// A parsed baseline file. Entries are tried in file order; the first match wins.
struct Baseline {
  std::vector<BaselineEntry> entries;
  std::string sha256;  ///< lowercase hex digest of the file's bytes
};

/// Reads and validates a baseline file. Throws BadInput (one line, naming the file) when the
/// file cannot be read, is not JSON (with the line number), or an entry is malformed
/// (missing case/reason, unknown expect value, unknown key: typos must not silently widen
/// or narrow what is waived).
Baseline load_baseline(const std::string& path);

/// Reads a plain list of case ids (or globs), one per line, '#' starting a comment: the
/// array-api-tests habit of an xfails file. Each line becomes an entry expecting "unexpected"
/// (any of fail, warn, crash, timeout, error), reason "listed in PATH (line N)". Throws BadInput
/// when the file cannot be read or a line holds more than one word.
Baseline load_xfails_list(const std::string& path);

/// What a baseline is asked about one result, typed: the case, the status it ended with and the
/// subjects it is scoped by, each named as the record names it (its name, else its path).
struct Question {
  struct Subject {
    std::string name;
    std::string dlpack_version;
  };
  std::string case_id;
  std::string status;
  std::vector<Subject> subjects;   ///< its own subject, then a pair case's producer and consumer
  std::string producer, consumer;  ///< a pair case's two ends ("" for any other case)
};

/// The question a record's result asks (what apply_baseline asks for each result).
Question question_of(const nlohmann::ordered_json& run, const nlohmann::ordered_json& result);

/// The first entry of `baseline` that matches `q` (file order), nullptr when none does.
const BaselineEntry* match(const Baseline& baseline, const Question& q);

/// Whether `entry` expects `status` (a result with it becomes xfail).
bool waives(const BaselineEntry& entry, const std::string& status);


/// Applies a baseline to a record. For each result, the first entry whose globs match:
///   observed status == expect  -> status "xfail" (expect "skip": stays "skip");
///   observed status == pass    -> status "xpass";
///   anything else              -> status unchanged (still unexpected).
/// The matched entry goes into result["baseline"] ({case, expect, reason, issue}).
/// Fills run["baseline_report"] = {path, sha256, stale: [entries matching no result],
/// xpass: [case ids]}, sets run["options"]["baseline"] = path, and calls finalize_summary.
/// Idempotent: results already marked xfail/xpass by an earlier baseline are restored to
/// their observed status first, so a saved record can be re-judged against a new baseline.
void apply_baseline(nlohmann::ordered_json& run, const Baseline& baseline,
                    const std::string& path);

/// Builds a baseline (the JSON to write for --write-baseline) that expects every current
/// fail/warn/crash/timeout/error result (reason "recorded by --write-baseline") and keeps
/// the entries behind current xfail results (reason, issue, confirmed_by; with `applied`,
/// the baseline the run was judged with, also their comment and when.dlpack_version), each
/// scoped to its exact case id: single-subject results by when.subject, pair results by
/// when.producer and when.consumer. Subjects are named by library without the version
/// ("numpy", matching every numpy) unless two subjects of the run differ only in version;
/// the file's comment records the full names.
nlohmann::ordered_json make_baseline(const nlohmann::ordered_json& run,
                                     const Baseline* applied = nullptr);

// ---------------------------------------------------------------------------------------
// Benchmarks (the "bench" section of a record written by `bench`, docs/run-record.md)
// ---------------------------------------------------------------------------------------

/// Reads a bench baseline: a run record holding a "bench" section, or the section itself
/// (an object with a "routes" array). Returns the section. Throws BadInput.
nlohmann::ordered_json load_bench_baseline(const std::string& path);

/// Compares run["bench"]["routes"] with a baseline section: every measured route that the
/// baseline also measured (same route id, subject index and peer index) gets
/// "baseline_net_median_ns" and "ratio"; a net median above baseline x threshold (and more
/// than min_delta_ns slower: differences of a few ns are noise) becomes an entry of
/// run["bench"]["warnings"]. Fills run["bench"]["baseline"]. Warnings fail a run only under
/// strict (finalize_summary). Idempotent.
void apply_bench_baseline(nlohmann::ordered_json& run, const nlohmann::ordered_json& baseline,
                          const std::string& path, double threshold, double min_delta_ns = 5.0);

}  // namespace dlpv::verdict
