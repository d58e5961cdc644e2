// SPDX-License-Identifier: Apache-2.0
// dlpack_validate/reports.hpp: renderers and baseline logic over a finished run record.
//
// Every report is a pure function of the canonical run record described in
// docs/run-record.md (schema "dlpack-validate/run", schema_version 1). Nothing here runs a
// case, loads a subject or reads the clock: given the same record, every writer produces the
// same bytes, which is what lets tests/reports/golden pin the output and lets
// `dlpack-validate report --from run.json` re-render any format later.
//
// Typical CLI flow:
//
//     auto run = ...;                                   // produced by the harness
//     if (baseline_path) {
//       auto b = dlpv::reports::load_baseline(*baseline_path);   // BadInput -> exit 2
//       dlpv::reports::apply_baseline(run, b, *baseline_path);
//     }
//     dlpv::reports::finalize_summary(run);             // counts, verdict, exit_code
//     dlpv::reports::write_junit(run, junit_stream);
//     dlpv::reports::write_html(run, html_stream);
//     dlpv::reports::append_step_summary(run);          // no-op outside GitHub Actions
//     return run["summary"]["exit_code"].get<int>();
//
// The writers tolerate missing or null fields (a partial record from an interrupted run
// still renders); they never throw on content, only on stream failures if the caller enabled
// stream exceptions.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlpack_validate/ids.hpp"

namespace dlpv::reports {

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
void finalize_summary(nlohmann::ordered_json& run);

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

// ---------------------------------------------------------------------------------------
// Writers
// ---------------------------------------------------------------------------------------

/// One self-contained HTML file: no network fetches, everything rendered here (readable
/// with scripts and styles blocked: headings, lists, tables, <details>), an inline script
/// that only adds filtering to the folded results lists. The verdict banner comes first,
/// then "Needs attention": the unexpected results grouped by failed requirement and shared
/// cause (linked from the banner). Passing and skipped results are one line each, folded per
/// area; a table whose cases were all skipped is one line saying why. The record is embedded
/// in <script type="application/json" id="run-record">: whole when it is at most 256 KiB,
/// else without its results and requirement texts (marked "abridged"). Stable element ids,
/// in page order: "verdict", "unexpected", "subjects", "requirement-matrix",
/// "support-matrix", "pair-matrix" (only when pair results exist), "results", "run-record".
void write_html(const nlohmann::ordered_json& run, std::ostream& out);

/// JUnit XML in the subset GitLab, Jenkins and the common GitHub actions accept: one
/// <testsuite> per subject (its own cases), then one per ordered pair ("pair P -> C", whose
/// failure messages start with the library charged, charge_of), one <testcase> per result
/// (counts are cases, not checks),
/// classname "dlpack-validate.<subject>.<area>", name = case id, times with 3 decimals.
/// Status mapping: fail -> <failure type=first requirement id>; warn -> passes with a
/// <system-out> note (strict: <failure type="warn">); skip -> <skipped type="skip">;
/// xfail -> <skipped type="xfail">; xpass -> passes (strict: <failure type="xpass">);
/// crash/timeout/error -> <error type="crash"|"timeout"|"harness-error">. Text that is not
/// valid XML 1.0 (control bytes, invalid UTF-8) is replaced by visible "\xNN" escapes.
void write_junit(const nlohmann::ordered_json& run, std::ostream& out);

/// GitHub-flavoured Markdown for a CI step summary: the verdict line first, a counts table,
/// the unexpected results table, then folded <details> blocks (warnings, skips, expected
/// failures, everything else). The output never exceeds budget_bytes; what does not fit is
/// announced as "… and N more, see the HTML/JSON report".
void write_markdown(const nlohmann::ordered_json& run, std::ostream& out,
                    std::size_t budget_bytes = 256 * 1024);

/// The canonical JSON run record itself, as `--json` writes it (two-space indent, invalid
/// UTF-8 replaced), one newline at the end.
void write_record(const nlohmann::ordered_json& run, std::ostream& out);

/// One report format: the option of the options table that names its file (`--json`,
/// `--html`, `--junit`, `--summary-md`), the file name's usual ending, what the file is (the
/// option's help) and its writer. The one list of formats: the options table, the app's
/// `finish` and output checks, the golden tests, the test renderer, the pytest plugin
/// (through the options table) and the Action's sync check all read it.
struct Format {
  const char* option;     ///< the options table's name ("summary_md": flag --summary-md)
  const char* extension;  ///< ".json", ".html", ".xml", ".md"
  const char* help;       ///< the option's help text
  void (*write)(const nlohmann::ordered_json& run, std::ostream& out);
};

/// Every report format, in the order the options list them and `finish` writes them.
const std::vector<Format>& formats();

/// The format whose option or extension (without its dot) is `name`; nullptr when none.
const Format* format_named(std::string_view name);

/// Appends write_markdown's output to the file named by $GITHUB_STEP_SUMMARY. Returns true
/// when something was written; false when the variable is unset or empty or the file cannot
/// be written. Never throws: a CI summary must not change the outcome of a run.
bool append_step_summary(const nlohmann::ordered_json& run) noexcept;

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

/// The bench section as a plain-text table for a terminal, ending with a "verdict:" line.
std::string bench_text(const nlohmann::ordered_json& run);

/// The human summary printed on stdout after a run: counts per library (pair findings where
/// they are charged), every unexpected result and warning with expected vs observed, the next
/// steps (re-run one case, baseline, timeouts), incidents and cases not run, then skips and
/// expected failures: one line per kind of reason, or (verbose) every distinct reason; verdict.
std::string text_summary(const nlohmann::ordered_json& run, bool verbose = false);

/// The one rule for library text shown on a terminal (the text summary, the bench table,
/// progress lines, explain, the pytest plugin's lines): valid UTF-8 where every control byte,
/// invalid byte and code point a terminal acts on (C1 controls, bidirectional overrides, line
/// separators) is shown escaped ("\x1B", "\u009B"); with `one_line`, tab, LF and CR become
/// spaces. An ANSI escape in a library's message can then neither recolour, retitle nor clear
/// the terminal of whoever reads the verdict.
std::string terminal_text(std::string_view s, bool one_line = true);

/// A skip or expected-failure message reduced to its kind, for grouping: the part before the
/// library's own words (the first ": "), with dtype, layout and struct-kind words and numbers
/// masked ("subject refused <kind> export of <dtype> (...) <layout> cleanly (...)").
std::string reason_kind(const std::string& message);

}  // namespace dlpv::reports
