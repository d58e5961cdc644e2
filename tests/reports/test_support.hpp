// SPDX-License-Identifier: Apache-2.0
// test_support.hpp: helpers shared by the report unit tests.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace dlpv_test {

using json = nlohmann::ordered_json;

/// tests/reports in the source tree (set by CMake).
inline std::string test_dir() { return DLPV_REPORTS_TEST_DIR; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// Occurrences of needle in hay.
inline std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) ++n;
  return n;
}

/// A minimal valid record with one subject and no results.
inline json make_run(bool strict = false) {
  json run = json::object();
  run["schema"] = "dlpack-validate/run";
  run["schema_version"] = 1;
  run["complete"] = true;
  run["deterministic"] = true;
  run["tool"] = {{"name", "dlpack-validate"}, {"version", "0.1.0"}};
  run["command_line"] = json::array({"dlpack-validate", "lib.so"});
  run["options"] = {{"filters", json::array({"*"})}, {"timeout_s", 10.0}, {"isolate", "worker"},
                    {"strict", strict}, {"baseline", nullptr}};
  run["subjects"] = json::array();
  run["subjects"].push_back({{"index", 0}, {"kind", "plugin"}, {"path", "lib.so"},
                             {"name", "lib 1.0"}, {"dlpack_version", "1.3"},
                             {"legacy_only", false}});
  run["requirements"] = json::object();
  run["results"] = json::array();
  run["summary"] = nullptr;
  run["baseline_report"] = nullptr;
  return run;
}

/// Appends a result to run and returns it.
inline json& add_result(json& run, const std::string& id, const std::string& status,
                        const std::string& requirement = "DEL-02", int subject = 0) {
  json r = json::object();
  r["id"] = id;
  r["subject"] = subject;
  r["title"] = id;
  r["area"] = "deleter";
  r["role"] = "consumer";
  r["requirements"] = json::array({requirement});
  r["severity"] = "MUST";
  r["params"] = json::object();
  r["status"] = status;
  r["message"] = status == "pass" ? "" : "message for " + id;
  r["expected"] = "";
  r["observed"] = "";
  r["checks"] = json::array();
  r["phase"] = "";
  r["signal"] = nullptr;
  r["duration_s"] = 0.0015;
  r["output_tail"] = "";
  r["baseline"] = nullptr;
  run["results"].push_back(std::move(r));
  return run["results"].back();
}

}  // namespace dlpv_test
