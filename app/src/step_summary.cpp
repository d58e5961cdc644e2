// SPDX-License-Identifier: Apache-2.0
// step_summary.cpp: appending the Markdown report to $GITHUB_STEP_SUMMARY (the app's, not a
// writer's: it reads the environment and writes a file the CI owns).
//
// The summary is a courtesy: an unwritable file, a full disk or any other failure is
// swallowed, because the gate is the exit status and must not depend on it.
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "dlpack_validate/app.hpp"
#include "dlpack_validate/reports.hpp"

namespace dlpv {

bool append_step_summary(const nlohmann::ordered_json& run) noexcept {
  try {
    const char* path = std::getenv("GITHUB_STEP_SUMMARY");
    if (path == nullptr || *path == '\0') return false;
    std::ostringstream md;
    reports::write_markdown(run, md);  // default budget: 256 KiB, a quarter of GitHub's 1 MiB cap
    std::ofstream file(path, std::ios::binary | std::ios::app);
    if (!file) return false;
    file << md.str();
    file.flush();
    return static_cast<bool>(file);
  } catch (...) {
    return false;
  }
}

}  // namespace dlpv
