// harness/src/protocol.hpp: supervisor <-> worker messages (docs/protocol.md). Commands on the
// worker's fd 3 are text lines (`run NONCE SUBJECT CASE_ID [PEER]`, `bench SETTINGS_JSON`,
// `quit`); events on its fd 4 are one JSON object per line (phase, hello, load_error, accepted,
// result, bench_result). Never stdout/stderr: the library owns those.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>
#include <nlohmann/json.hpp>

// Defined when AddressSanitizer is compiled in (worker memory limits and signal handling
// differ under it).
#if defined(__SANITIZE_ADDRESS__)
#define DLPV_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DLPV_UNDER_ASAN 1
#endif
#endif

namespace dlpv::protocol {

constexpr int kCommandFd = 3;
constexpr int kEventFd = 4;
/// A memory file holding the supervisor's covers (cover::memo_text), so that a worker does not
/// compute them again; the worker reads it as its cases register and closes it.
constexpr int kCoversFd = 5;
/// Where the worker keeps them once started (out of the library's way, close-on-exec): fixed
/// numbers, so that the supervisor can check that they are still its pipes.
constexpr int kWorkerCommandFd = 500;
constexpr int kWorkerEventFd = 501;

nlohmann::json outcome_to_json(const CaseOutcome& o);
CaseOutcome outcome_from_json(const nlohmann::json& j);
nlohmann::json subject_to_json(const SubjectInfo& s);
SubjectInfo subject_from_json(const nlohmann::json& j);
/// Serialise to one line; invalid UTF-8 from the library is replaced, never thrown on.
std::string to_line(const nlohmann::json& j);

/// ev[key] when it is a string, else "": events come from the worker and are never assumed
/// to be well formed.
std::string string_field(const nlohmann::json& ev, const char* key);

/// A fresh command nonce (docs/protocol.md): 16 hex digits from a random generator seeded
/// once per process.
std::string make_nonce();

/// Current UTC time as ISO 8601 ("2026-11-22T10:00:00Z"), for run records.
std::string iso_now();

}  // namespace dlpv::protocol
