// SPDX-License-Identifier: Apache-2.0
// test_bench.cpp: the bench section of a record: baseline comparison, verdict, text table.
#include <string>

#include <doctest/doctest.h>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"
#include "test_support.hpp"

using namespace dlpv::reports;
using namespace dlpv::verdict;
using dlpv_test::json;

namespace {

json route(const char* id, long long subject, double net_median, const char* status = "ok") {
  json r = json::object();
  r["route"] = id;
  r["title"] = "t";
  r["subject"] = subject;
  r["peer"] = nullptr;
  r["status"] = status;
  r["reason"] = std::string(status) == "ok" ? "" : "why";
  if (std::string(status) == "ok") {
    r["iterations"] = 1000;
    r["batches"] = 5;
    r["raw_ns"] = {{"median", net_median + 2}, {"p10", net_median + 1}, {"p90", net_median + 3}};
    r["net_ns"] = {{"median", net_median}, {"p10", net_median - 1}, {"p90", net_median + 1}};
  }
  return r;
}

json bench_run(json routes, bool strict = false) {
  json run = dlpv_test::make_run(strict);
  json b = json::object();
  b["process"] = "worker";
  b["settings"] = {{"iterations", 0}, {"batches", 5}, {"target_batch_ms", 5.0}};
  b["calibration"] = {{"route", "empty"}, {"iterations", 100}, {"batches", 5},
                      {"raw_ns", {{"median", 2.0}, {"p10", 1.9}, {"p90", 2.1}}}};
  b["routes"] = std::move(routes);
  b["baseline"] = nullptr;
  b["warnings"] = json::array();
  run["bench"] = std::move(b);
  finalize_summary(run);
  return run;
}

}  // namespace

TEST_CASE("bench baseline: a route beyond the threshold is a warning, not a failure") {
  json run = bench_run(json::array({route("a", 0, 300), route("b", 0, 100), route("c", 0, 6), route("new", 0, 5)}));
  json base = bench_run(json::array({route("a", 0, 100), route("b", 0, 90), route("c", 0, 2)}))["bench"];
  apply_bench_baseline(run, base, "old.json", 1.5);
  const json& b = run["bench"];
  REQUIRE(b["warnings"].size() == 1);  // c is 3x but only 4 ns slower: noise
  CHECK(b["warnings"][0]["route"] == "a");
  CHECK(b["routes"][0]["regression"] == true);
  CHECK(b["routes"][1]["regression"] == false);
  CHECK(b["routes"][2]["regression"] == false);
  CHECK(b["baseline"]["compared"] == 3);
  CHECK(b["baseline"]["unmatched"].size() == 1);
  CHECK(run["summary"]["exit_code"] == 0);
  // Idempotent: judging again gives the same section.
  json again = run;
  apply_bench_baseline(again, base, "old.json", 1.5);
  CHECK(again == run);
  // A looser threshold clears the warning.
  apply_bench_baseline(run, base, "old.json", 4.0);
  CHECK(run["bench"]["warnings"].empty());
}

TEST_CASE("bench verdict: errors are unexpected; regressions only under strict") {
  json run = bench_run(json::array({route("a", 0, 10), route("x", 0, 0, "unavailable")}));
  CHECK(run["summary"]["exit_code"] == 0);
  run["bench"]["routes"].push_back(route("y", 0, 0, "error"));
  finalize_summary(run);
  CHECK(run["summary"]["unexpected"] == 1);
  json strict = bench_run(json::array({route("a", 0, 300)}), true);
  apply_bench_baseline(strict, bench_run(json::array({route("a", 0, 100)}))["bench"], "old.json", 1.5);
  CHECK(strict["summary"]["exit_code"] == 1);
}

TEST_CASE("bench baseline file: a record or its section; anything else is bad input") {
  const std::string dir = dlpv_test::test_dir() + "/data/";
  CHECK(load_bench_baseline(dir + "bench.json").contains("routes"));
  CHECK_THROWS_AS(load_bench_baseline(dir + "clean.json"), BadInput);
  CHECK_THROWS_AS(load_bench_baseline(dir + "no-such-file.json"), BadInput);
}

TEST_CASE("bench text: calibration, both raw and net figures, unavailable reasons, verdict") {
  json run = bench_run(json::array({route("plugin.export_delete.versioned", 0, 40.5), route("x", 0, 0, "unavailable")}));
  const std::string t = bench_text(run);
  CHECK(t.find("harness overhead") != std::string::npos);
  CHECK(t.find("plugin.export_delete.versioned") != std::string::npos);
  CHECK(t.find("40.5") != std::string::npos);  // net
  CHECK(t.find("42.5") != std::string::npos);  // raw
  CHECK(t.find("unavailable x") != std::string::npos);
  CHECK(t.find("\nverdict: PASS") != std::string::npos);
}
