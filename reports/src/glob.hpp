// SPDX-License-Identifier: Apache-2.0
// glob.hpp: fnmatch-style matching for baseline case ids and subject conditions.
//
// Implemented here rather than via POSIX fnmatch() so matching is identical on every
// platform and never depends on the locale: `*` any run (dots included: ids are not paths),
// `?` one byte, `[abc]` / `[a-z]` / `[!x]` / `[^x]` a set, `\c` a literal c.
#pragma once

#include <string>
#include <string_view>

namespace dlpv::reports::detail {

bool glob_match(std::string_view pattern, std::string_view text);

/// pattern with * ? [ ] \ escaped, so it matches exactly `literal`.
std::string glob_escape(std::string_view literal);

}  // namespace dlpv::reports::detail
