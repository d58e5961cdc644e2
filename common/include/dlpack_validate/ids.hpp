// common/include/dlpack_validate/ids.hpp: what case ids and requirement ids mean, shared by
// the harness (case selection, run record) and the reports (baselines, matrices), which
// otherwise do not depend on each other.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dlpv {

/// fnmatch-style matching over case ids, subject names and versions, identical on every
/// platform and locale: `*` any run (dots included: ids are not paths), `?` one byte,
/// `[abc]` / `[a-z]` / `[!x]` / `[^x]` a set, `\c` a literal c.
bool glob_match(std::string_view pattern, std::string_view text);

/// What is malformed in a glob, in a few words ("unclosed [ at character 1"), or "" when it is
/// well-formed. (glob_match reads a malformed one anyway: an unclosed '[' as a literal '[', a
/// trailing '\' as itself; a user who typed one meant something else.)
std::string glob_problem(std::string_view pattern);

/// pattern with * ? [ ] \ escaped, so it matches exactly `literal`.
std::string glob_escape(std::string_view literal);

/// Report area of a requirement id, from its family (the area table of spec/requirements.md,
/// compiled in as common/src/areas.inc: CAP capsule, XAPI exchange_api, ...); "" for an
/// unknown family.
std::string area_of(std::string_view requirement_id);

/// The report areas, in the order reports group them (the spec's area table).
const std::vector<std::string>& report_areas();

/// The words for an area key ("version_flags" -> "version/flags"); "other" for "", the key
/// itself for an unknown one.
std::string area_label(std::string_view area);

/// Position of an area in report_areas(), or report_areas().size() for unknown areas (sorted last).
std::size_t area_index(std::string_view area);

/// `word` as one shell word for a command line users copy: as it is when it holds only plain
/// characters, else in single quotes (a quote inside written '\''). Shared by the CLI (its own
/// invocation) and the reports (the "run it again" lines).
std::string shell_word(std::string_view word);

}  // namespace dlpv
