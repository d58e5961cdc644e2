// SPDX-License-Identifier: Apache-2.0
// glob.hpp: the reports use the one glob matcher (common/include/dlpack_validate/ids.hpp).
#pragma once

#include "dlpack_validate/ids.hpp"

namespace dlpv::reports::detail {

using dlpv::glob_escape;
using dlpv::glob_match;

}  // namespace dlpv::reports::detail
