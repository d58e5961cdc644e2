// SPDX-License-Identifier: Apache-2.0
// io.hpp: reading user-supplied JSON files with one-line BadInput errors.
//
// Both the baseline and a saved run record come from the user; a bad one must end the run
// with exit status 2 and a single line that names the file and, for syntax errors, the
// line number, never with nlohmann's multi-part exception text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dlpv::verdict::detail {

/// The whole file as bytes. Throws BadInput("<what> '<path>': cannot read (<reason>)").
std::string read_bytes(const std::string& what, const std::string& path);

/// Parses bytes as JSON. Throws BadInput("<what> '<path>': not valid JSON at line N").
nlohmann::ordered_json parse_json(const std::string& what, const std::string& path,
                                  const std::string& bytes);

}  // namespace dlpv::verdict::detail
