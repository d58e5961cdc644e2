// harness/include/dlpack_validate/status.hpp: the vocabulary of verdicts (statuses, the
// severity of a requirement, a case's role), without the case model around it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace dlpv {

enum class Status { pass, fail, warn, skip, xfail, xpass, crash, timeout, error };
enum class Severity { must, should, may };
enum class Role { producer, consumer, exchange_api, pair, python_protocol };

const char* to_string(Status s);
const char* to_string(Severity s);
const char* to_string(Role r);
bool parse_status(const std::string& text, Status& out);

}  // namespace dlpv
