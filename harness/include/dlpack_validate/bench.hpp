// harness/include/dlpack_validate/bench.hpp: `bench`: the cost of one DLPack exchange per
// route (docs/design.md §11). A route is one operation (export -> import -> delete, from_dlpack, a C
// exchange-API call ...) run N times per batch; batches are repeated and each gives one
// ns/op figure; a route reports the median, p10 and p90 of those. The same loop around an
// empty operation measures the harness's own overhead, which is printed and subtracted.
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <dlpack_validate/subject.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace dlpv::bench {

struct Settings {
  long long iterations = 0;     ///< operations per batch; 0 = sized so a batch lasts target_batch_ms
  int batches = 21;             ///< measured batches per route (one warm-up batch more)
  double target_batch_ms = 5.0; ///< batch length when iterations is 0
};

nlohmann::json settings_to_json(const Settings& s);
Settings settings_from_json(const nlohmann::json& j);

/// One operation of a route; false = it failed (the route's error() says why).
using Op = std::function<bool()>;

/// A route on one subject (or an ordered producer -> consumer pair).
struct Route {
  std::string id;     ///< "plugin.export_import_delete.versioned", "python.from_dlpack", ...
  std::string title;  ///< what one operation is, in words
  int subject = 0;    ///< the producer (or the only subject)
  int peer = -1;      ///< the consumer of a pair route, else -1
  std::string unavailable;  ///< non-empty: the route is not run, and this is why
  Op op;
  std::function<std::string()> error;  ///< message after op() returned false
  /// Runs the whole measurement of this route inside a context (e.g. with the GIL held and
  /// the cyclic GC paused); the default calls it directly.
  std::function<void(const std::function<void()>&)> scope;
  /// Frees what the route holds (called inside scope after measuring).
  std::function<void()> cleanup;
};

/// Builds the routes a provider knows for these subjects (all loaded in this process).
/// Each kind of subject registers its own (subjects/plugin, subjects/python).
using RouteProvider = std::function<std::vector<Route>(const std::vector<Subject*>& subjects)>;
void register_provider(RouteProvider provider);

/// Measure every route for `subjects` in this process: the bench section's "calibration" and
/// "routes" (docs/bench.md). `progress(route_id)` is called before each route.
nlohmann::ordered_json measure(const std::vector<Subject*>& subjects, const Settings& settings,
                               const std::function<void(const std::string&)>& progress = {});

/// The worker side of the `bench SETTINGS_JSON` command (harness/src/worker.cpp).
nlohmann::json worker_bench(const std::vector<Subject*>& subjects, const std::string& settings_json,
                            const std::function<void(const std::string&)>& progress);

}  // namespace dlpv::bench
