// SPDX-License-Identifier: Apache-2.0
// dlpack_validate/record_access.hpp: reading a run record without trusting it.
//
// A record may be partial (an interrupted run), hand-edited or old: every field is read through
// these tolerant accessors (missing or null -> empty, a wrong type -> empty) instead of
// .at()/get<>(), so neither the verdict nor a writer throws on content. The statuses and what
// counts as unexpected are the verdict's words; the writers (reports/) use the same ones.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dlpv::verdict::access {

using json = nlohmann::ordered_json;

/// The nine statuses in the canonical (summary) order.
inline constexpr std::array<std::string_view, 9> k_statuses = {
    "pass", "fail", "warn", "skip", "xfail", "xpass", "crash", "timeout", "error"};

bool is_known_status(std::string_view s);

/// Status of a result, normalised: an unknown or missing status reads as "error".
std::string status_of(const json& result);

/// Unexpected statuses gate the run: fail/crash/timeout/error, plus warn/xpass when strict.
bool is_unexpected(std::string_view status, bool strict);

/// String value of j[key]: "" when absent or null, the string itself, or the compact dump
/// of any other value (numbers, booleans).
std::string text(const json& j, const char* key);

/// Same as text() for a value that is already selected.
std::string text_of(const json& v);

bool flag(const json& j, const char* key);

/// j[key] when j is an object holding key, else a shared null value.
const json& member(const json& j, const char* key);

/// j[key] when it is an array, else a shared empty array (const operator[] on a missing key
/// is undefined behaviour in nlohmann::json, so nothing reads record input with it).
const json& array_at(const json& j, const char* key);

/// An index as the record writes it (a number, or a number as text), -1 when it is neither;
/// not checked against the subjects.
long long index_value(const json& v);

/// Index of subject `index` in run["subjects"] when it is one there, else -1. `index` as the
/// record writes it: a number, or a pair case's params.producer/consumer (a number as text).
long long subject_index_of(const json& run, const json& index);

/// Index of the result's subject in run["subjects"], -1 when absent or out of range.
long long subject_index(const json& run, const json& result);

/// Subject record #index (null json when out of range).
const json& subject_at(const json& run, long long index);

/// Subject record for a result's "subject" index (null json when out of range).
const json& subject_of(const json& run, const json& result);

/// Display name of subject #index: its "name", else its "path", else "subject N".
std::string subject_name(const json& run, long long index);
std::string subject_name(const json& run, const json& result);

/// Requirement ids of a result, in order.
std::vector<std::string> requirements_of(const json& result);

/// Whether the run is strict (options.strict).
bool is_strict(const json& run);

/// The requirement a result broke: the requirement of its first failing check (a "fail"
/// check before a "warn" one), else its first requirement id; "" when it cites none.
std::string failing_requirement(const json& result);

/// The run's bench section, or null when it has none.
const json& bench_of(const json& run);
/// Route errors (and a failed bench) always count as unexpected; regression warnings only
/// under strict.
std::size_t bench_errors(const json& run);
std::size_t bench_warnings(const json& run);

/// A bench route's subjects: "numpy 2.1.0", or "numpy 2.1.0 → torch 2.13.0" for a pair route.
std::string route_subjects(const json& run, const json& route);

/// How many cases run["not_run"] says were never run.
std::size_t not_run_count(const json& run);

}  // namespace dlpv::verdict::access
