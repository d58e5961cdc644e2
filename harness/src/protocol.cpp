// harness/src/protocol.cpp: (de)serialisation of worker messages.
// SPDX-License-Identifier: Apache-2.0
#include "protocol.hpp"

#include <dlpack_validate/runner.hpp>

#include <fmt/format.h>

#include <ctime>
#include <random>

namespace dlpv::protocol {

using nlohmann::json;

json outcome_to_json(const CaseOutcome& o) {
  json checks = json::array();
  for (const Check& c : o.checks) {
    checks.push_back({{"r", c.requirement}, {"s", to_string(c.status)}, {"m", c.message},
                      {"e", c.expected}, {"o", c.observed}});
    if (!c.party.empty()) checks.back()["p"] = c.party;
  }
  return {{"status", to_string(o.status)}, {"message", o.message}, {"expected", o.expected},
          {"observed", o.observed},        {"phase", o.phase},     {"duration_s", o.duration_s},
          {"checks", checks}};
}

CaseOutcome outcome_from_json(const json& j) {
  CaseOutcome o;
  if (!parse_status(j.value("status", "error"), o.status)) o.status = Status::error;
  o.message = j.value("message", "");
  o.expected = j.value("expected", "");
  o.observed = j.value("observed", "");
  o.phase = j.value("phase", "");
  o.duration_s = j.value("duration_s", 0.0);
  for (const json& c : j.value("checks", json::array())) {
    Check k;
    k.requirement = c.value("r", "");
    if (!parse_status(c.value("s", "error"), k.status)) k.status = Status::error;
    k.message = c.value("m", "");
    k.expected = c.value("e", "");
    k.observed = c.value("o", "");
    k.party = c.value("p", "");
    o.checks.push_back(std::move(k));
  }
  return o;
}

json subject_to_json(const SubjectInfo& s) {
  json j = {{"index", s.index},
            {"kind", s.kind},
            {"path", s.path},
            {"name", s.name},
            {"major", s.dlpack_version.major},
            {"minor", s.dlpack_version.minor},
            {"capabilities", s.capabilities},
            {"absent", s.absent},
            {"notes", s.notes}};
  if (!s.version_unknown.empty()) j["version_unknown"] = s.version_unknown;
  return j;
}

SubjectInfo subject_from_json(const json& j) {
  SubjectInfo s;
  s.index = j.value("index", 0);
  s.kind = j.value("kind", "");
  s.path = j.value("path", "");
  s.name = j.value("name", "");
  s.dlpack_version = DLPackVersion{j.value("major", 0u), j.value("minor", 0u)};
  s.capabilities = j.value("capabilities", std::vector<std::string>{});
  s.notes = j.value("notes", std::vector<std::string>{});
  // Why capabilities are absent, as the worker's load checks found it: the supervisor words a skip
  // it decides itself exactly as the worker would.
  s.absent = j.value("absent", std::map<std::string, std::string>{});
  s.version_unknown = j.value("version_unknown", "");
  return s;
}

std::string string_field(const json& ev, const char* key) {
  const auto k = ev.find(key);
  return k != ev.end() && k->is_string() ? k->get<std::string>() : std::string();
}

std::string make_nonce() {
  static std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}", rng());
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string to_line(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace dlpv::protocol

namespace dlpv {
std::string iso_now() { return protocol::iso_now(); }
}  // namespace dlpv
