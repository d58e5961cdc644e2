// harness/src/bench.cpp: the timing loop over the routes the subjects' providers register
// (subjects/plugin/src/bench_routes.cpp, subjects/python/src/bench_routes.cpp). `bench` from
// options to a run record is the application's (app/src/bench_run.cpp).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/runner.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <memory>

#include "protocol.hpp"


namespace dlpv::bench {

using nlohmann::json;
using nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

// ---- settings -----------------------------------------------------------------------------

json settings_to_json(const Settings& s) {
  return {{"iterations", s.iterations}, {"batches", s.batches}, {"target_batch_ms", s.target_batch_ms}};
}

Settings settings_from_json(const json& j) {
  Settings s;
  s.iterations = j.value("iterations", s.iterations);
  s.batches = j.value("batches", s.batches);
  s.target_batch_ms = j.value("target_batch_ms", s.target_batch_ms);
  return s;
}

// ---- the timing loop ----------------------------------------------------------------------

namespace {

constexpr long long kMaxIterations = 100'000'000;

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
};

/// Percentile with linear interpolation between the closest ranks.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {percentile(v, 0.5), percentile(v, 0.1), percentile(v, 0.9)};
}

ordered_json stats_json(const Stats& s) {
  auto r = [](double x) { return std::round(x * 100) / 100; };  // 0.01 ns is plenty
  return {{"median", r(s.median)}, {"p10", r(s.p10)}, {"p90", r(s.p90)}};
}

/// n operations; the elapsed ns, or -1 when an operation failed. Not inlined, so the empty
/// route pays exactly the call and loop costs every other route pays.
[[gnu::noinline]] long long run_batch(const Op& op, long long n) {
  const auto t0 = Clock::now();
  for (long long i = 0; i < n; ++i)
    if (!op()) return -1;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

struct Measured {
  long long iterations = 0;
  int batches = 0;
  Stats raw;
  double batch_ms = 0;  ///< the median batch's length: how close sizing came to the target
  std::string error;  ///< non-empty: an operation failed
};

Measured time_op(const Op& op, const std::function<std::string()>& error, const Settings& s) {
  Measured m;
  auto failed = [&](const char* when) {
    m.error = fmt::format("the operation failed {}: {}", when, error ? error() : std::string("(no message)"));
    return m;
  };
  if (run_batch(op, 1) < 0) return failed("on its first call");
  long long n = s.iterations;
  if (n <= 0) {  // size a batch to about target_batch_ms
    const double target_ns = std::max(0.05, s.target_batch_ms) * 1e6;
    n = 1;
    for (;;) {
      const long long t = run_batch(op, n);
      if (t < 0) return failed("while sizing the batches");
      if (t >= target_ns / 4 || n >= kMaxIterations) {
        n = static_cast<long long>(std::ceil(static_cast<double>(n) * target_ns / std::max<long long>(t, 1)));
        break;
      }
      n *= 4;
    }
    n = std::clamp<long long>(n, 1, kMaxIterations);
    // One sizing batch can be far off (first calls, caches, a busy neighbour): re-size from the
    // median of three batches until a batch takes about the target (within -20 %/+25 %), at
    // most four rounds, so that every route's batches are long enough for the clock.
    for (int round = 0; round < 4; ++round) {
      std::vector<long long> t3;
      for (int i = 0; i < 3; ++i) {
        const long long t = run_batch(op, n);
        if (t < 0) return failed("while sizing the batches");
        t3.push_back(t);
      }
      std::sort(t3.begin(), t3.end());
      const double med = static_cast<double>(t3[1]);
      if ((med >= 0.8 * target_ns && med <= 1.25 * target_ns) || n >= kMaxIterations) break;
      n = std::clamp<long long>(static_cast<long long>(std::ceil(static_cast<double>(n) * target_ns / std::max(med, 1.0))),
                                1, kMaxIterations);
    }
  }
  if (run_batch(op, n) < 0) return failed("in the warm-up batch");
  std::vector<double> per_op, batch_ms;
  for (int b = 0; b < std::max(1, s.batches); ++b) {
    const long long t = run_batch(op, n);
    if (t < 0) return failed(fmt::format("in batch {}", b + 1).c_str());
    per_op.push_back(static_cast<double>(t) / static_cast<double>(n));
    batch_ms.push_back(static_cast<double>(t) / 1e6);
  }
  m.iterations = n;
  m.batches = static_cast<int>(per_op.size());
  m.raw = stats_of(per_op);
  m.batch_ms = stats_of(batch_ms).median;
  return m;
}

std::vector<RouteProvider>& providers() {
  static std::vector<RouteProvider> list;
  return list;
}

}  // namespace

void register_provider(RouteProvider provider) { providers().push_back(std::move(provider)); }

// ---- measuring ----------------------------------------------------------------------------

ordered_json measure(const std::vector<Subject*>& subjects, const Settings& settings,
                     const std::function<void(const std::string&)>& progress) {
  ordered_json out;
  if (progress) progress("calibration");
  const Op empty = [] { return true; };
  const Measured cal = time_op(empty, {}, settings);
  out["calibration"] = {{"route", "empty"},
                        {"title", "the harness's loop and call around an operation that does nothing"},
                        {"iterations", cal.iterations},
                        {"batches", cal.batches},
                        {"raw_ns", stats_json(cal.raw)}};
  ordered_json routes = ordered_json::array();
  for (const RouteProvider& provider : providers()) {
    for (Route& r : provider(subjects)) {
      ordered_json j;
      j["route"] = r.id;
      j["title"] = r.title;
      j["subject"] = r.subject;
      j["peer"] = r.peer >= 0 ? ordered_json(r.peer) : ordered_json();
      if (!r.unavailable.empty()) {
        j["status"] = "unavailable";
        j["reason"] = r.unavailable;
        routes.push_back(std::move(j));
        continue;
      }
      if (progress) progress(r.id);
      Measured m;
      auto body = [&] {
        m = time_op(r.op, r.error, settings);
        if (r.cleanup) r.cleanup();
      };
      if (r.scope) r.scope(body);
      else body();
      if (!m.error.empty()) {
        j["status"] = "error";
        j["reason"] = m.error;
      } else {
        const Stats net{m.raw.median - cal.raw.median, m.raw.p10 - cal.raw.median, m.raw.p90 - cal.raw.median};
        j["status"] = "ok";
        j["reason"] = "";
        j["iterations"] = m.iterations;
        j["batches"] = m.batches;
        j["batch_ms"] = std::round(m.batch_ms * 1000) / 1000;
        j["raw_ns"] = stats_json(m.raw);
        j["net_ns"] = stats_json(net);
      }
      routes.push_back(std::move(j));
    }
  }
  out["routes"] = std::move(routes);
  return out;
}

json worker_bench(const std::vector<Subject*>& subjects, const std::string& settings_json,
                  const std::function<void(const std::string&)>& progress) {
  const json parsed = json::parse(settings_json, nullptr, false);
  const Settings s = settings_from_json(parsed.is_object() ? parsed : json::object());
  return json(measure(subjects, s, progress));
}

}  // namespace dlpv::bench
