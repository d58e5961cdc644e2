// SPDX-License-Identifier: Apache-2.0
// access.cpp: tolerant record accessors (record_access.hpp).
#include "dlpack_validate/record_access.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace dlpv::verdict::access {

bool is_known_status(std::string_view s) {
  return std::find(k_statuses.begin(), k_statuses.end(), s) != k_statuses.end();
}

std::string status_of(const json& result) {
  std::string s = text(result, "status");
  return is_known_status(s) ? s : "error";
}

bool is_unexpected(std::string_view s, bool strict) {
  if (s == "fail" || s == "crash" || s == "timeout" || s == "error") return true;
  return strict && (s == "warn" || s == "xpass");
}

std::string text_of(const json& v) {
  if (v.is_null()) return {};
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string text(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it == j.end() ? std::string() : text_of(*it);
}

bool flag(const json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it != j.end() ? *it : null_value;
}

const json& array_at(const json& j, const char* key) {
  static const json empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

long long index_value(const json& v) {
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_string()) {
    try {
      return std::stoll(v.get<std::string>());
    } catch (...) {
      return -1;
    }
  }
  return -1;
}

const json& subject_at(const json& run, long long i) {
  static const json null_value;
  const json& subjects = array_at(run, "subjects");
  if (i < 0 || static_cast<std::size_t>(i) >= subjects.size()) return null_value;
  return subjects[static_cast<std::size_t>(i)];
}

long long subject_index_of(const json& run, const json& index) {
  const long long i = index_value(index);
  return i >= 0 && static_cast<std::size_t>(i) < array_at(run, "subjects").size() ? i : -1;
}

long long subject_index(const json& run, const json& result) {
  return result.is_object() ? subject_index_of(run, member(result, "subject")) : -1;
}

const json& subject_of(const json& run, const json& result) {
  return subject_at(run, subject_index(run, result));
}

std::string subject_name(const json& run, long long index) {
  const json& s = subject_at(run, index);
  if (!s.is_null()) {
    std::string name = text(s, "name");
    if (!name.empty()) return name;
    std::string path = text(s, "path");
    if (!path.empty()) return path;
  }
  return fmt::format(FMT_STRING("subject {}"), index);
}

std::string subject_name(const json& run, const json& result) {
  return subject_name(run, result.is_object() ? index_value(member(result, "subject")) : -1);
}

std::vector<std::string> requirements_of(const json& result) {
  std::vector<std::string> ids;
  for (const auto& r : array_at(result, "requirements")) ids.push_back(text_of(r));
  return ids;
}

bool is_strict(const json& run) { return flag(member(run, "options"), "strict"); }

// The requirement a result broke: that of its first check that did not pass (a fail before a
// warn), else the one its message names ("[DEL-02] ..."), else its first requirement; "" when
// it cites none. (The text summary, the HTML report and JUnit all group and type by this.)
std::string failing_requirement(const json& result) {
  const json& checks = array_at(result, "checks");
  for (const char* wanted : {"fail", "warn"})
    for (const auto& c : checks)
      if (c.is_object() && text(c, "status") == wanted && !text(c, "requirement").empty())
        return text(c, "requirement");
  const std::string m = text(result, "message");
  const auto close = m.find(']');
  if (!m.empty() && m[0] == '[' && close != std::string::npos && close > 1 && close < 40) return m.substr(1, close - 1);
  const auto reqs = requirements_of(result);
  return reqs.empty() ? std::string() : reqs.front();
}

const json& bench_of(const json& run) { return member(run, "bench"); }

std::size_t bench_errors(const json& run) {
  const json& b = bench_of(run);
  if (!b.is_object()) return 0;
  std::size_t n = text(b, "error").empty() ? 0 : 1;
  for (const auto& r : array_at(b, "routes"))
    if (text(r, "status") == "error") ++n;
  return n;
}

std::size_t bench_warnings(const json& run) { return array_at(bench_of(run), "warnings").size(); }

std::string route_subjects(const json& run, const json& route) {
  std::string s = subject_name(run, route.contains("subject") && route["subject"].is_number_integer()
                                        ? route["subject"].get<long long>() : -1LL);
  const json& peer = member(route, "peer");
  if (peer.is_number_integer()) s += " \xE2\x86\x92 " + subject_name(run, peer.get<long long>());
  return s;
}

std::size_t not_run_count(const json& run) {
  std::size_t n = 0;
  for (const auto& e : array_at(run, "not_run")) {
    if (!e.is_object()) continue;
    n += e.contains("count") && e["count"].is_number_unsigned() ? e["count"].get<std::size_t>()
                                                                : array_at(e, "cases").size();
  }
  return n;
}

}  // namespace dlpv::verdict::access
