// SPDX-License-Identifier: Apache-2.0
// sha256.hpp: SHA-256 (FIPS 180-4) of a byte string, as lowercase hex.
//
// Reports record the hash of the baseline file they were judged against, so a reader can
// tell which version of the waiver list produced a verdict. A few dozen lines here avoid
// a crypto dependency for one digest.
#pragma once

#include <string>
#include <string_view>

namespace dlpv::verdict::detail {

std::string sha256_hex(std::string_view bytes);

}  // namespace dlpv::verdict::detail
