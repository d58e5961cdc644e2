// harness/include/dlpack_validate/text_summary.hpp: the human summary printed on stdout,
// a pure function of the run record (shared by the CLI and the Python shim).
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace dlpv {

std::string text_summary(const nlohmann::ordered_json& record);

}  // namespace dlpv
