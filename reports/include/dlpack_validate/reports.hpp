// SPDX-License-Identifier: Apache-2.0
// dlpack_validate/reports.hpp: the renderers of a finished, judged run record.
//
// Every report is a pure function of the canonical run record described in
// docs/run-record.md (schema "dlpack-validate/run", schema_version 1). Nothing here runs a
// case, loads a subject or reads the clock: given the same record, every writer produces the
// same bytes, which is what lets tests/reports/golden pin the output and lets
// `dlpack-validate report --from run.json` re-render any format later.
//
// What a record means (summary, exit code, baselines, charges) is the verdict layer's
// (dlpack_validate/verdict.hpp); the writers show what it decided. Typical flow (app/):
//
//     auto run = ...;                                   // produced by the harness
//     if (baseline_path) {
//       auto b = dlpv::verdict::load_baseline(*baseline_path);   // BadInput -> exit 2
//       dlpv::verdict::apply_baseline(run, b, *baseline_path);
//     }
//     dlpv::verdict::finalize_summary(run);             // counts, verdict, exit_code
//     for (const auto& f : dlpv::reports::formats()) f.write(run, stream_for(f));
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
