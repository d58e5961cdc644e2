// SPDX-License-Identifier: Apache-2.0
// test_summary.cpp: finalize_summary (verdict, exit code) and load_run input checks.
#include <string>
#include <unistd.h>

#include <doctest/doctest.h>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"
#include "test_support.hpp"

using namespace dlpv::reports;
using namespace dlpv::verdict;
using dlpv_test::add_result;
using dlpv_test::json;
using dlpv_test::make_run;

TEST_CASE("finalize_summary: every status key, in order, even when zero") {
  json run = make_run();
  finalize_summary(run);
  const json& s = run["summary"];
  std::string keys;
  for (const auto& item : s["counts"].items()) keys += item.key() + " ";
  CHECK(keys == "pass fail warn skip xfail xpass crash timeout error ");
  CHECK(s["total"] == 0);
  CHECK(s["verdict"] == "pass");
  CHECK(s["exit_code"] == 0);
}

TEST_CASE("finalize_summary: unexpected statuses, non-strict and strict") {
  for (bool strict : {false, true}) {
    CAPTURE(strict);
    json run = make_run(strict);
    for (const char* st : {"pass", "fail", "warn", "skip", "xfail", "xpass", "crash", "timeout", "error"}) {
      add_result(run, std::string("c.") + st, st);
    }
    add_result(run, "c.bogus", "weird-status");  // unknown reads as error
    finalize_summary(run);
    const json& s = run["summary"];
    CHECK(s["total"] == 10);
    CHECK(s["counts"]["error"] == 2);
    CHECK(s["unexpected"] == (strict ? 7 : 5));
    CHECK(s["verdict"] == "fail");
    CHECK(s["exit_code"] == 1);
  }
}

TEST_CASE("finalize_summary: warn and xpass pass unless strict; stale counts only when strict") {
  json run = make_run(false);
  add_result(run, "a", "warn");
  add_result(run, "b", "xpass");
  add_result(run, "c", "skip");
  add_result(run, "d", "xfail");
  run["baseline_report"] = {{"path", "b.json"}, {"sha256", ""},
                            {"stale", json::array({json{{"case", "x"}}})}, {"xpass", json::array({"b"})}};
  finalize_summary(run);
  CHECK(run["summary"]["verdict"] == "pass");
  CHECK(run["summary"]["exit_code"] == 0);
  run["options"]["strict"] = true;
  finalize_summary(run);
  CHECK(run["summary"]["unexpected"] == 3);
  CHECK(run["summary"]["verdict"] == "fail");
}

TEST_CASE("load_run validates schema and version") {
  std::string dir = dlpv_test::test_dir() + "/data/";
  json run = load_run(dir + "single.json");
  CHECK(run["results"].size() == 11);

  auto error_for = [](const std::string& text) {
    std::string path = "/tmp/dlpv_run_record_test_" + std::to_string(::getpid()) + ".json";
    dlpv_test::spit(path, text);
    try {
      load_run(path);
    } catch (const BadInput& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error_for("{").find("not valid JSON at line 1") != std::string::npos);
  CHECK(error_for("{\"schema\":\"x\"}").find("not a dlpack-validate run record") != std::string::npos);
  CHECK(error_for(R"({"schema":"dlpack-validate/run","schema_version":2})")
            .find("unsupported schema_version 2") != std::string::npos);
  CHECK(error_for(R"({"schema":"dlpack-validate/run","schema_version":1,"subjects":[]})")
            .find("\"results\" is missing") != std::string::npos);
  CHECK_THROWS_AS(load_run("/nonexistent.json"), BadInput);
}

TEST_CASE("pair_matrix: counted from the results, kept only where the record has one") {
  json run = make_run();
  add_result(run, "single", "fail");  // no peer: not a pair
  add_result(run, "p.a", "pass")["peer"] = 1;
  add_result(run, "p.b", "fail")["peer"] = 1;
  add_result(run, "p.c", "pass", "DEL-02", 1)["peer"] = 0;
  add_result(run, "p.d", "pass")["peer"] = "1";  // an index as text, as params write it
  add_result(run, "p.e", "pass")["peer"] = nullptr;
  finalize_summary(run);
  CHECK_FALSE(run.contains("pair_matrix"));  // an old record without one is not given one

  run["pair_matrix"] = json::array({json{{"stale", true}}});
  finalize_summary(run);
  const json& m = run["pair_matrix"];
  REQUIRE(m.size() == 2);
  CHECK(m[0] == json{{"producer", 0}, {"consumer", 1}, {"counts", {{"fail", 1}, {"pass", 2}}}});
  CHECK(m[1] == json{{"producer", 1}, {"consumer", 0}, {"counts", {{"pass", 1}}}});

  // judged again (a baseline turned the fail into xfail): the matrix follows
  run["results"][2]["status"] = "xfail";
  finalize_summary(run);
  CHECK(run["pair_matrix"][0]["counts"] == json{{"pass", 2}, {"xfail", 1}});
}
