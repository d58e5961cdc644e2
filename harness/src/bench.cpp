// harness/src/bench.cpp: the timing loop, the plugin routes, and `bench` from options to a
// run record (measured in a worker process, like cases, unless --isolate=none).
// SPDX-License-Identifier: Apache-2.0
#include <dlpack_validate/app.hpp>
#include <dlpack_validate/bench.hpp>
#include <dlpack_validate/reports.hpp>
#include <dlpack_validate/run_record.hpp>
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
  }
  if (run_batch(op, n) < 0) return failed("in the warm-up batch");
  std::vector<double> per_op;
  for (int b = 0; b < std::max(1, s.batches); ++b) {
    const long long t = run_batch(op, n);
    if (t < 0) return failed(fmt::format("in batch {}", b + 1).c_str());
    per_op.push_back(static_cast<double>(t) / static_cast<double>(n));
  }
  m.iterations = n;
  m.batches = static_cast<int>(per_op.size());
  m.raw = stats_of(per_op);
  return m;
}

// ---- plugin routes ------------------------------------------------------------------------

/// The tensor every route exchanges: 16 float32 on the CPU, contiguous. Small on purpose:
/// the figures are the exchange's own cost, not a copy's.
struct Tensor16 {
  int64_t shape[1] = {16};
  DLPVRequest req{};
  Tensor16() {
    req.struct_size = sizeof(DLPVRequest);
    req.dtype = DLDataType{kDLFloat, 32, 1};
    req.device = DLDevice{kDLCPU, 0};
    req.ndim = 1;
    req.shape = shape;
    req.layout = DLPV_LAYOUT_CONTIGUOUS;
    req.max_version = DLPackVersion{DLPV_DLPACK_MAJOR, DLPV_DLPACK_MINOR};
    req.stream = DLPV_NO_STREAM;
  }
};

std::string missing(const SubjectInfo& s, const char* need) {
  if (s.has(need)) return {};
  if (auto why = s.absent.find(need); why != s.absent.end()) return why->second;
  const bool versioned = std::strstr(need, "versioned") != nullptr;
  if (versioned && s.legacy_only())
    return fmt::format("legacy-only subject (declares DLPack {}): no {}", s.version_text(), need);
  return fmt::format("the subject does not implement {}", need);
}

std::string pair_label(const Subject& p, const Subject& c) {
  return fmt::format("{} -> {}", p.info().name, c.info().name);
}

void call_deleter(DLManagedTensorVersioned* t) {
  if (t && t->deleter) t->deleter(t);
}
void call_deleter(DLManagedTensor* t) {
  if (t && t->deleter) t->deleter(t);
}

template <bool Versioned>
Route export_import_route(Subject& p, Subject& c) {
  using Managed = std::conditional_t<Versioned, DLManagedTensorVersioned, DLManagedTensor>;
  const char* v = Versioned ? "versioned" : "legacy";
  Route r;
  r.id = fmt::format("plugin.export_import_delete.{}", v);
  r.title = fmt::format("export ({}) a new float32[16], import it, release the array (the "
                        "consumer calls the deleter): {}", v, pair_label(p, c));
  r.subject = p.info().index;
  r.peer = c.info().index;
  r.unavailable = missing(p.info(), Versioned ? "export_versioned" : "export_legacy");
  if (r.unavailable.empty()) r.unavailable = missing(c.info(), Versioned ? "import_versioned" : "import_legacy");
  if (r.unavailable.empty()) r.unavailable = missing(c.info(), "release_array");
  auto t = std::make_shared<Tensor16>();
  auto err = std::make_shared<std::string>();
  r.op = [&p, &c, t, err]() {
    Managed* m = nullptr;
    int rc = Versioned ? p.export_versioned(t->req, reinterpret_cast<DLManagedTensorVersioned**>(&m))
                       : p.export_legacy(t->req, reinterpret_cast<DLManagedTensor**>(&m));
    if (rc != DLPV_OK || !m) {
      *err = fmt::format("export returned {}: {}", rc, p.last_error());
      return false;
    }
    void* array = nullptr;
    rc = Versioned ? c.import_versioned(reinterpret_cast<DLManagedTensorVersioned*>(m), &array)
                   : c.import_legacy(reinterpret_cast<DLManagedTensor*>(m), &array);
    if (rc != DLPV_OK) {
      call_deleter(m);  // ownership stayed with us
      *err = fmt::format("import returned {}: {}", rc, c.last_error());
      return false;
    }
    c.release_array(array);
    return true;
  };
  r.error = [err] { return *err; };
  return r;
}

template <bool Versioned>
Route export_route(Subject& p) {
  using Managed = std::conditional_t<Versioned, DLManagedTensorVersioned, DLManagedTensor>;
  const char* v = Versioned ? "versioned" : "legacy";
  Route r;
  r.id = fmt::format("plugin.export_delete.{}", v);
  r.title = fmt::format("export ({}) a new float32[16] and call its deleter (export alone)", v);
  r.subject = p.info().index;
  r.unavailable = missing(p.info(), Versioned ? "export_versioned" : "export_legacy");
  auto t = std::make_shared<Tensor16>();
  auto err = std::make_shared<std::string>();
  r.op = [&p, t, err]() {
    Managed* m = nullptr;
    const int rc = Versioned ? p.export_versioned(t->req, reinterpret_cast<DLManagedTensorVersioned**>(&m))
                             : p.export_legacy(t->req, reinterpret_cast<DLManagedTensor**>(&m));
    if (rc != DLPV_OK || !m) {
      *err = fmt::format("export returned {}: {}", rc, p.last_error());
      return false;
    }
    call_deleter(m);
    return true;
  };
  r.error = [err] { return *err; };
  return r;
}

/// The allocator of the C exchange API: the route a C/C++ consumer uses to get a tensor of
/// the library's kind without Python (the *_from_py_object routes need a Python object).
Route allocator_route(Subject& p) {
  Route r;
  r.id = "exchange_api.managed_tensor_allocator";
  r.title = "exchange API: managed_tensor_allocator(float32[16] prototype) + deleter";
  r.subject = p.info().index;
  r.unavailable = missing(p.info(), "exchange_api");
  const DLPackExchangeAPI* api = r.unavailable.empty() ? p.exchange_api() : nullptr;
  if (r.unavailable.empty() && !api) r.unavailable = "exchange_api() returned NULL";
  if (api && api->header.version.major != 1)
    r.unavailable = fmt::format("exchange API table of major version {} (this harness speaks 1)",
                                api->header.version.major);
  if (r.unavailable.empty() && !api->managed_tensor_allocator)
    r.unavailable = "the exchange API table has no managed_tensor_allocator";
  if (!r.unavailable.empty()) return r;
  struct State {
    int64_t shape[1] = {16};
    DLTensor proto{};
    std::string err;
  };
  auto st = std::make_shared<State>();
  st->proto.device = DLDevice{kDLCPU, 0};
  st->proto.ndim = 1;
  st->proto.dtype = DLDataType{kDLFloat, 32, 1};
  st->proto.shape = st->shape;
  r.op = [api, st]() {
    DLManagedTensorVersioned* out = nullptr;
    const int rc = api->managed_tensor_allocator(
        &st->proto, &out, st.get(), [](void* ctx, const char* kind, const char* message) {
          static_cast<State*>(ctx)->err = fmt::format("{}: {}", kind ? kind : "?", message ? message : "");
        });
    if (rc != 0 || !out) {
      if (st->err.empty()) st->err = fmt::format("managed_tensor_allocator returned {}", rc);
      return false;
    }
    call_deleter(out);
    return true;
  };
  r.error = [st] { return st->err; };
  return r;
}

std::vector<Route> plugin_routes(const std::vector<Subject*>& subjects) {
  std::vector<Route> out;
  for (Subject* p : subjects) {
    if (p->info().kind != "plugin") continue;
    for (Subject* c : subjects) {
      if (c->info().kind != "plugin") continue;
      out.push_back(export_import_route<true>(*p, *c));
      out.push_back(export_import_route<false>(*p, *c));
    }
    out.push_back(export_route<true>(*p));
    out.push_back(export_route<false>(*p));
    out.push_back(allocator_route(*p));
  }
  return out;
}

std::vector<RouteProvider>& providers() {
  static std::vector<RouteProvider> list{plugin_routes};
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

// ---- bench from options -------------------------------------------------------------------

ordered_json run_bench(const AppConfig& cfg) {
  Settings s;
  s.iterations = cfg.bench_iterations;
  s.batches = cfg.bench_batches;
  s.target_batch_ms = cfg.bench_batch_ms;
  if (s.iterations < 0) throw BadInput{"--iterations must be >= 0 (0 sizes batches automatically)"};
  if (s.batches < 1) throw BadInput{"--batches must be >= 1"};
  if (!(s.target_batch_ms > 0)) throw BadInput{"--batch-ms must be a positive number"};
  if (!(cfg.bench_threshold > 1.0)) throw BadInput{"--bench-threshold must be greater than 1"};
  ordered_json baseline;
  if (!cfg.bench_baseline_path.empty()) {
    try {
      baseline = reports::load_bench_baseline(cfg.bench_baseline_path);
    } catch (const reports::BadInput& e) {
      throw BadInput{e.what()};
    }
  }

  RunResult run;
  run.started_at = protocol::iso_now();
  const auto t0 = Clock::now();
  ordered_json section;
  const bool in_process = cfg.isolate == "none";
  if (in_process) {
    std::vector<std::unique_ptr<Subject>> owned;
    std::vector<Subject*> subjects;
    try {
      for (size_t i = 0; i < cfg.subjects.size(); ++i) {
        owned.push_back(cfg.loader(cfg.subjects[i], static_cast<int>(i)));
        subjects.push_back(owned.back().get());
        run.subjects.push_back(owned.back()->info());
      }
    } catch (const SubjectLoadError& e) {
      throw BadInput{e.message};
    }
    section = measure(subjects, s);
  } else {
    // In a worker the supervisor watches, as the cases run (a route may be silent for
    // --timeout beyond ten times its expected length; with fixed --iterations its length is
    // unknown: then up to 10 minutes). Loading may take a minute (a Python package's import).
    RunOptions o;
    o.subject_paths = cfg.subjects;
    o.worker_command = cfg.worker_command;
    o.loader = cfg.loader;
    o.subject_kind = cfg.kind;
    o.timeout_s = std::max(cfg.timeout_s, 60.0);
    const double expected_s = s.iterations > 0 ? 60.0 : (s.batches + 2) * s.target_batch_ms / 1000.0;
    try {
      section = ordered_json::parse(bench_in_worker(o, settings_to_json(s).dump(), cfg.timeout_s + 10.0 * expected_s, run));
    } catch (const SubjectLoadError& e) {
      throw BadInput{e.message};
    }
  }
  run.duration_s = std::chrono::duration<double>(Clock::now() - t0).count();

  RecordOptions ro;
  ro.command_line = cfg.command_line;
  ro.timeout_s = cfg.timeout_s;
  ro.isolation = in_process ? Isolation::none : Isolation::worker;
  ro.strict = cfg.strict;
  ro.deterministic = cfg.deterministic;
  ordered_json record = make_run_record(run, ro);
  ordered_json bench;
  bench["process"] = in_process ? "in this process (--isolate=none)" : "in a worker process";
  bench["settings"] = settings_to_json(s);
  if (section.contains("error")) bench["error"] = section["error"];
  bench["calibration"] = section.contains("calibration") ? section["calibration"] : ordered_json();
  bench["routes"] = section.contains("routes") ? section["routes"] : ordered_json::array();
  bench["baseline"] = nullptr;
  bench["warnings"] = ordered_json::array();
  record["bench"] = std::move(bench);
  if (!baseline.is_null())
    reports::apply_bench_baseline(record, baseline, cfg.bench_baseline_path, cfg.bench_threshold);
  reports::finalize_summary(record);
  return record;
}

}  // namespace dlpv::bench
