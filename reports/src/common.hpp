// SPDX-License-Identifier: Apache-2.0
// common.hpp: small helpers and vocabularies shared by the report writers.
//
// Writers must render partial or hand-edited records without throwing, so every field is
// read through these tolerant helpers (missing or null -> empty) instead of .at()/get<>().
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlpack_validate/ids.hpp"
#include "dlpack_validate/record_access.hpp"
#include "dlpack_validate/verdict.hpp"

namespace dlpv::reports::detail {

using json = nlohmann::ordered_json;

// The tolerant record accessors and the statuses are the verdict layer's
// (dlpack_validate/record_access.hpp); the writers read records through the same ones.
using verdict::access::array_at;
using verdict::access::bench_errors;
using verdict::access::bench_of;
using verdict::access::bench_warnings;
using verdict::access::failing_requirement;
using verdict::access::flag;
using verdict::access::is_known_status;
using verdict::access::is_strict;
using verdict::access::is_unexpected;
using verdict::access::k_statuses;
using verdict::access::member;
using verdict::access::requirements_of;
using verdict::access::route_subjects;
using verdict::access::status_of;
using verdict::access::subject_at;
using verdict::access::subject_index;
using verdict::access::subject_index_of;
using verdict::access::subject_name;
using verdict::access::subject_of;
using verdict::access::text;
using verdict::access::text_of;
using verdict::charge_of;
using verdict::finalize_summary;
using verdict::charge_text;
using verdict::Charge;

/// Rank for "worst status wins" aggregation in matrices (higher is worse). A cell holding a
/// pass and a skip reads "pass": the skip only says one variant was not attempted.
int severity_rank(std::string_view status);

// Report areas, their order and labels: dlpv::report_areas, area_label, area_index (ids.hpp).

/// Who a result is about, for tables: the subject name, or "producer → consumer" for pair
/// cases (their "subject" field alone names only one end).
std::string subject_label(const json& run, const json& result);

/// Legacy-only wording derived from the subject's capabilities, "" when not legacy_only.
std::string legacy_note(const json& subject);

/// run["requirements"][id]["summary"], "" when absent.
std::string requirement_summary(const json& run, const std::string& id);

/// Command line joined for display, with single quotes around words that need them.
std::string shell_join(const json& argv);

/// Seconds with exactly three decimals; null, negative or non-finite values read as 0.
std::string seconds3(const json& v);

/// At most max_bytes from the end of s (cut on a UTF-8 boundary), prefixed with a note
/// saying how much was dropped. Library output can be large; reports stay bounded.
std::string bounded_tail(const std::string& s, std::size_t max_bytes);

/// First line of s, at most max_bytes (on a UTF-8 boundary), "…" appended when cut.
std::string one_line(const std::string& s, std::size_t max_bytes);

/// Truncates s to at most max_bytes without splitting a UTF-8 sequence.
std::string utf8_prefix(const std::string& s, std::size_t max_bytes);

/// "crash: SIGSEGV (11) in phase read" style reason for the non-pass statuses.
std::string reason_line(const json& run, const json& result);

/// Who died, in plain words, for a crash ("the library under test crashed (SIGSEGV (11)) in its
/// deleter; the validator survived and went on") or an error ("the validator itself failed
/// ..."); "" for the other statuses. A crash's message is added only where it says more than
/// its signal and phase.
std::string death_statement(const json& run, const json& result);

/// The record itself when it has a summary object; otherwise a finalised copy kept in
/// `storage`, so a writer handed an unfinalised record still prints a truthful verdict.
const json& with_summary(const json& run, json& storage);

/// run["incidents"] (a worker that died, hung or broke the protocol with no case in flight)
/// grouped by message in first-seen order, so a library that kills every worker the same way
/// reads as one line with a count.
struct IncidentGroup {
  std::size_t count = 0;
  std::string kind, message, signal, next_case, output_tail;  ///< of the first one
};
std::vector<IncidentGroup> incident_groups(const json& run);

/// run["not_run"]: cases never run, one line per entry with a few of their ids.
struct NotRunLine {
  std::size_t count = 0;
  std::string reason, sample;
};
std::vector<NotRunLine> not_run_lines(const json& run, std::size_t sample = 3);

/// The command that runs just this result's case again, typed in the directory the run started
/// in: the record's `invocation` (the program), then the run's command line without its
/// program, report, baseline and selection options, with `--filter ID` (empty when the record
/// has no command line, or is a merge's). Pair cases keep every subject, so the pair runs again.
std::string rerun_command(const json& run, const json& result);

/// The command that explains a requirement or case id, to which the id is appended: the record's
/// program (its invocation, else the first word of its command line, else dlpack-validate)
/// with `explain`.
std::string explain_command(const json& run);

/// The next steps for a run's findings, one line each ("" when there is nothing to act on):
/// how to run one case again, the confirming command of a baseline entry where one exists,
/// how to accept the findings as known (--write-baseline), and, when there are timeouts, how
/// to tell a slow machine from a hang.
std::vector<std::string> next_steps(const json& run);

/// A requirement text for plain-text reports: its Markdown code spans (`x`) without the
/// backticks.
std::string plain_text(const std::string& markdown);
/// The same for HTML: escaped, code spans as <code>.
std::string html_text_with_code(const std::string& markdown);

/// The link of a requirement id: the record's tool.requirements_doc + "#" + the id in lower
/// case (the heading's anchor in docs/requirements.md); "" when the record names no document.
std::string requirement_link(const json& run, const std::string& id);

}  // namespace dlpv::reports::detail

namespace dlpv::reports {
// The verdict the writers show (verdict.hpp): the charge and the summary are decided there.
using verdict::Charge;
using verdict::charge_of;
using verdict::finalize_summary;
}  // namespace dlpv::reports
