// app/include/dlpack_validate/run_record.hpp: the canonical JSON run record
// (docs/run-record.md) built from a finished run. Every report renders from it.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/runner.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dlpv {

inline constexpr const char* kToolVersion = "0.1.0";

struct RecordOptions {
  std::vector<std::string> command_line;
  std::string invocation;  ///< written as the record's `invocation` when not empty
  std::vector<std::string> filters;
  std::vector<std::string> excludes;      ///< shown in the record only when given
  std::vector<std::string> requirements;  ///< shown in the record only when given
  std::vector<std::string> keywords;      ///< -k expressions, shown in the record only when given
  bool exitfirst = false;                 ///< shown in the record only when given
  std::string shard;                      ///< --shard "K/N", shown in the record only when given
  double timeout_s = kDefaultCaseTimeoutS;
  double load_timeout_s = kDefaultLoadTimeoutS;
  Isolation isolation = Isolation::worker;
  bool strict = false;
  bool deterministic = false;  ///< no timestamps, durations, hostnames
};

nlohmann::ordered_json make_run_record(const RunResult& run, const RecordOptions& opt);

/// Where requirement ids link to (the record's tool.requirements_doc; "#<id in lower case>" is
/// appended): from a build tree, its source tree's docs/requirements.md as a file:// URL; else
/// the published copy's URL the build was configured with (-DDLPV_REQUIREMENTS_DOC); else ""
/// (no link: the reports say `explain ID`).
std::string requirements_doc();

/// The CUDA driver as seen from here: {"found": bool, "detail": text}.
nlohmann::ordered_json probe_cuda();

}  // namespace dlpv
