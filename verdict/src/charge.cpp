// SPDX-License-Identifier: Apache-2.0
// charge.cpp: which library a result is charged to (verdict.hpp: charge_of; docs/results.md,
// "Which library is charged").
#include "dlpack_validate/record_access.hpp"
#include "dlpack_validate/verdict.hpp"

namespace dlpv::verdict {

using access::json;
namespace a = access;

Charge charge_of(const json& run, const json& result) {
  const long long own = a::subject_index(run, result);
  const json& p = a::member(result, "params");
  if (a::text(result, "role") != "pair" || a::text(p, "producer").empty() || a::text(p, "consumer").empty())
    return {own, "subject"};
  auto charged = [&](const std::string& side) -> Charge {
    if (side != "producer" && side != "consumer") return {};
    const long long i = a::subject_index_of(run, a::member(p, side.c_str()));
    return i >= 0 ? Charge{i, side} : Charge{};
  };
  for (const char* wanted : {"fail", "warn"})
    for (const auto& c : a::array_at(result, "checks"))
      if (a::text(c, "status") == wanted) return charged(a::text(c, "party"));
  const std::string st = a::status_of(result);
  if (st == "pass" || st == "skip" || st == "xpass") return {};
  if (st == "xfail") {
    const std::string expect = a::text(a::member(result, "baseline"), "expect");
    if (expect != "crash" && expect != "timeout" && expect != "error" && expect != "unexpected") return {};
  }
  const std::string phase = a::text(result, "phase");
  if (phase == "export" || phase == "inspect") return charged("producer");
  if (phase == "import" || phase == "read") return charged("consumer");
  return {};
}

std::string charge_text(const json& run, const json& result) {
  if (a::text(result, "role") != "pair") return {};
  const Charge c = charge_of(run, result);
  if (c.subject >= 0) return "charged to " + a::subject_name(run, c.subject) + " (the " + c.side + ")";
  const std::string st = a::status_of(result);
  if (st == "pass" || st == "skip" || st == "xpass") return {};
  return "charged to neither side alone";
}

}  // namespace dlpv::verdict
