// SPDX-License-Identifier: Apache-2.0
// bench_baseline.cpp: the bench's verdict: a route's net median against an earlier run's
// (verdict.hpp: load_bench_baseline, apply_bench_baseline).
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "dlpack_validate/record_access.hpp"
#include "dlpack_validate/verdict.hpp"
#include "io.hpp"

namespace dlpv::verdict {

using access::json;
namespace a = access;

json load_bench_baseline(const std::string& path) {
  const std::string what = "bench baseline";
  json j = detail::parse_json(what, path, detail::read_bytes(what, path));
  if (j.is_object() && j.contains("bench") && j["bench"].is_object()) j = j["bench"];
  if (!j.is_object() || !j.contains("routes") || !j["routes"].is_array())
    throw BadInput(fmt::format(FMT_STRING("{} '{}': neither a run record with a \"bench\" section "
                                          "nor a bench section (no \"routes\" array)"),
                               what, path));
  return j;
}

void apply_bench_baseline(json& run, const json& baseline, const std::string& path, double threshold,
                          double min_delta_ns) {
  if (!run.contains("bench") || !run["bench"].is_object()) return;
  json& bench = run["bench"];
  using Key = std::tuple<std::string, long long, long long>;
  auto key_of = [](const json& r) {
    auto idx = [&](const char* k) {
      auto it = r.find(k);
      return it != r.end() && it->is_number_integer() ? it->get<long long>() : -1LL;
    };
    return Key{a::text(r, "route"), idx("subject"), idx("peer")};
  };
  std::map<Key, double> before;
  for (const auto& r : a::array_at(baseline, "routes")) {
    auto net = r.find("net_ns");
    if (a::text(r, "status") != "ok" || net == r.end() || !net->is_object()) continue;
    auto med = net->find("median");
    if (med != net->end() && med->is_number()) before[key_of(r)] = med->get<double>();
  }
  json warnings = json::array();
  json unmatched = json::array();
  std::size_t compared = 0;
  if (!bench.contains("routes") || !bench["routes"].is_array()) bench["routes"] = json::array();
  for (auto& r : bench["routes"]) {
    for (const char* k : {"baseline_net_median_ns", "ratio", "regression"}) r.erase(k);
    if (a::text(r, "status") != "ok") continue;
    const auto found = before.find(key_of(r));
    const std::string subjects = a::route_subjects(run, r);
    if (found == before.end()) {
      unmatched.push_back(a::text(r, "route") + " on " + subjects);
      continue;
    }
    const double now = r["net_ns"].value("median", 0.0);
    const double then = found->second;
    const double ratio = now / std::max(then, 1.0);  // a net figure under 1 ns is noise
    const bool regression = ratio > threshold && now - then > min_delta_ns;
    ++compared;
    r["baseline_net_median_ns"] = then;
    r["ratio"] = std::round(ratio * 1000) / 1000;
    r["regression"] = regression;
    if (regression) {
      json w = json::object();
      w["route"] = a::text(r, "route");
      w["subject"] = r.value("subject", json());
      w["peer"] = r.value("peer", json());
      w["subjects"] = subjects;
      w["message"] = fmt::format(FMT_STRING("net median {:.1f} ns/op is {:.2f}x the baseline's {:.1f} "
                                            "ns/op (threshold {}x)"),
                                 now, ratio, then, threshold);
      warnings.push_back(std::move(w));
    }
  }
  json base = json::object();
  base["path"] = path;
  base["threshold"] = threshold;
  base["min_delta_ns"] = min_delta_ns;
  base["compared"] = compared;
  base["unmatched"] = std::move(unmatched);
  bench["baseline"] = std::move(base);
  bench["warnings"] = std::move(warnings);
  finalize_summary(run);
}

}  // namespace dlpv::verdict
