// SPDX-License-Identifier: Apache-2.0
// test_baseline.cpp: baseline parsing, matching, stale entries, xpass, --write-baseline.
#include <cstdio>
#include <unistd.h>
#include <string>

#include <doctest/doctest.h>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"
#include "test_support.hpp"

using namespace dlpv::reports;
using namespace dlpv::verdict;
using dlpv_test::add_result;
using dlpv_test::json;
using dlpv_test::make_run;

namespace {

// Writes text to a fresh temporary file and returns its path.
std::string temp_file(const std::string& text) {
  char name[] = "/tmp/dlpv_baseline_XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  FILE* f = fdopen(fd, "wb");
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  return name;
}

Baseline baseline_from(const std::string& text) {
  std::string path = temp_file(text);
  Baseline b = load_baseline(path);
  std::remove(path.c_str());
  return b;
}

std::string load_error(const std::string& text, const std::string& path_override = "") {
  std::string path = path_override.empty() ? temp_file(text) : path_override;
  std::string msg;
  try {
    load_baseline(path);
  } catch (const BadInput& e) {
    msg = e.what();
  }
  if (path_override.empty()) std::remove(path.c_str());
  return msg;
}

}  // namespace

TEST_CASE("load_baseline rejects bad files with one-line messages") {
  CHECK(load_error("", "/nonexistent/known.json") ==
        "baseline '/nonexistent/known.json': cannot read (No such file or directory)");
  CHECK(load_error("", "/tmp").find("is a directory") != std::string::npos);
  std::string m = load_error("{\n  \"entries\": [\n    {\"case\": }\n  ]\n}\n");
  CHECK(m.find("not valid JSON at line 3") != std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
  CHECK(load_error("   ").find("empty file") != std::string::npos);
  CHECK(load_error("[]").find("\"entries\" array") != std::string::npos);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"boom","reason":"r"}]})")
            .find("entry 1: \"expect\" is \"boom\"") != std::string::npos);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail"}]})").find("\"reason\"") !=
        std::string::npos);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail","reason":"r","cases":"x"}]})")
            .find("unknown key \"cases\"") != std::string::npos);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail","reason":"r","when":{"target":"x"}}]})")
            .find("unknown key \"when.target\"") != std::string::npos);
  CHECK(load_error(R"({"entries":[], "schema":"other"})").find("schema") != std::string::npos);
}

TEST_CASE("load_baseline parses entries and hashes the bytes") {
  std::string text =
      R"({"entries":[{"case":"deleter.*","expect":"fail","reason":"known","issue":"https://x/1",)"
      R"("when":{"subject":"lib*","dlpack_version":"1.*"}}]})";
  Baseline b = baseline_from(text);
  REQUIRE(b.entries.size() == 1);
  CHECK(b.entries[0].case_glob == "deleter.*");
  CHECK(b.entries[0].issue == "https://x/1");
  CHECK(b.entries[0].has_subject);
  CHECK(b.entries[0].dlpack_version_glob == "1.*");
  CHECK(b.sha256.size() == 64);
}

TEST_CASE("apply_baseline: xfail, xpass, mismatched status, stale, first match wins") {
  json run = make_run();
  add_result(run, "deleter.a", "fail");
  add_result(run, "deleter.b", "pass");
  add_result(run, "deleter.c", "crash");   // expected fail, observed crash: stays unexpected
  add_result(run, "stream.d", "skip");
  add_result(run, "other.e", "fail");      // no entry
  Baseline b = baseline_from(R"({"entries":[
    {"case":"deleter.a","expect":"fail","reason":"first"},
    {"case":"deleter.*","expect":"fail","reason":"family","issue":"https://i/2"},
    {"case":"stream.*","expect":"skip","reason":"no gpu"},
    {"case":"never.*","expect":"timeout","reason":"stale one"},
    {"case":"other.*","expect":"fail","reason":"wrong subject","when":{"subject":"numpy*"}}]})");
  apply_baseline(run, b, "known.json");
  const json& r = run["results"];
  CHECK(r[0]["status"] == "xfail");
  CHECK(r[0]["baseline"]["reason"] == "first");
  CHECK(r[0]["baseline"]["issue"].is_null());
  CHECK(r[1]["status"] == "xpass");
  CHECK(r[1]["baseline"]["issue"] == "https://i/2");
  CHECK(r[2]["status"] == "crash");
  CHECK(r[2]["baseline"]["expect"] == "fail");
  CHECK(r[3]["status"] == "skip");
  CHECK(r[3]["baseline"]["reason"] == "no gpu");
  CHECK(r[4]["status"] == "fail");
  CHECK(r[4]["baseline"].is_null());

  const json& br = run["baseline_report"];
  CHECK(br["path"] == "known.json");
  CHECK(br["sha256"] == b.sha256);
  // never.* matched nothing: stale. other.* is about numpy, which this run did not load: not
  // applicable here, and not stale (one baseline file serves runs of different libraries).
  REQUIRE(br["stale"].size() == 1);
  CHECK(br["stale"][0]["case"] == "never.*");
  REQUIRE(br["not_applicable"].size() == 1);
  CHECK(br["not_applicable"][0]["case"] == "other.*");
  CHECK(br["xpass"] == json::array({"deleter.b"}));
  CHECK(run["options"]["baseline"] == "known.json");
  // apply_baseline finalises: crash + unmatched fail are unexpected, the xpass is not.
  CHECK(run["summary"]["unexpected"] == 2);
  CHECK(run["summary"]["counts"]["xfail"] == 1);
}

TEST_CASE("apply_baseline is idempotent and re-judges against a new baseline") {
  json run = make_run();
  add_result(run, "deleter.a", "fail");
  add_result(run, "deleter.b", "pass");
  Baseline b = baseline_from(R"({"entries":[{"case":"deleter.*","expect":"fail","reason":"r"}]})");
  apply_baseline(run, b, "one.json");
  json once = run;
  apply_baseline(run, b, "one.json");
  CHECK(run == once);
  Baseline empty = baseline_from(R"({"entries":[]})");
  apply_baseline(run, empty, "none.json");
  CHECK(run["results"][0]["status"] == "fail");
  CHECK(run["results"][1]["status"] == "pass");
  CHECK(run["results"][0]["baseline"].is_null());
}

TEST_CASE("apply_baseline: when.subject and when.dlpack_version scope entries") {
  json run = make_run();
  run["subjects"].push_back({{"index", 1}, {"kind", "python"}, {"path", "numpy"},
                             {"name", "numpy 2.1"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  add_result(run, "x.case", "fail", "DEL-02", 0);
  add_result(run, "x.case", "fail", "DEL-02", 1);
  Baseline b = baseline_from(R"({"entries":[
    {"case":"x.*","expect":"fail","reason":"numpy only","when":{"subject":"numpy*","dlpack_version":"1.1"}}]})");
  apply_baseline(run, b, "b.json");
  CHECK(run["results"][0]["status"] == "fail");
  CHECK(run["results"][1]["status"] == "xfail");
}

TEST_CASE("apply_baseline: when.producer and when.consumer scope pair cases by their ends") {
  json run = make_run();
  run["subjects"].push_back({{"index", 1}, {"kind", "python"}, {"path", "tensorflow"},
                             {"name", "tensorflow 2.21.0"}, {"dlpack_version", "0.8"}, {"legacy_only", true}});
  auto pair = [&](int producer, int consumer, const char* status) {
    json& r = add_result(run, "pair.float32.contiguous.legacy", status, "LAYOUT-01", producer);
    r["role"] = "pair";
    r["peer"] = consumer;
    r["params"] = {{"producer", std::to_string(producer)}, {"consumer", std::to_string(consumer)}};
  };
  pair(0, 1, "crash");  // into tensorflow: waived
  pair(1, 0, "pass");   // out of tensorflow: a plain pass, not an xpass
  pair(0, 0, "crash");  // neither end tensorflow: stays a crash
  add_result(run, "pair.float32.contiguous.legacy", "crash", "LAYOUT-01", 1);  // not a pair case
  Baseline b = baseline_from(R"({"entries":[
    {"case":"pair.*","expect":"crash","reason":"tf aborts","when":{"consumer":"tensorflow*"}}]})");
  apply_baseline(run, b, "b.json");
  CHECK(run["results"][0]["status"] == "xfail");
  CHECK(run["results"][1]["status"] == "pass");
  CHECK(run["results"][2]["status"] == "crash");
  CHECK(run["results"][3]["status"] == "crash");
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail","reason":"r","when":{"producer":3}}]})")
            .find("\"when.producer\" must be a string") != std::string::npos);
}

TEST_CASE("a run whose options narrowed the selection: entries about cases it left out are not stale") {
  const char* entries = R"({"entries":[{"case":"pair.a","expect":"fail","reason":"r"},
                                       {"case":"single.*","expect":"fail","reason":"r"},
                                       {"case":"pair.gone","expect":"fail","reason":"r"}]})";
  // The whole run: single.* and pair.gone matched no case at all, so both are stale.
  json whole = make_run(true);
  add_result(whole, "pair.a", "fail");
  add_result(whole, "pair.b", "pass");
  apply_baseline(whole, baseline_from(entries), "b.json");
  CHECK(whole["baseline_report"]["stale"].size() == 2);
  CHECK(whole["summary"]["unexpected"] == 2);
  // --filter 'pair.*': single.* names cases the selection left out (not applicable, not
  // counted); pair.gone is about a case the selection holds by its glob but none ran: stale
  // only if a case of the run has its id, and none has.
  json pairs = make_run(true);
  pairs["options"]["filters"] = json::array({"pair.*"});
  add_result(pairs, "pair.a", "fail");
  add_result(pairs, "pair.b", "pass");
  apply_baseline(pairs, baseline_from(entries), "b.json");
  CHECK(pairs["baseline_report"]["stale"].empty());
  CHECK(pairs["baseline_report"]["not_applicable"].size() == 2);
  CHECK(pairs["summary"]["unexpected"] == 0);
  // -x: a case listed as not run is in the selection, so an entry about it is stale.
  json first = make_run(true);
  add_result(first, "pair.a", "fail");
  first["not_run"] = json::array({{{"subject", 0}, {"count", 1}, {"reason", "-x"}, {"cases", {"single.c"}}}});
  apply_baseline(first, baseline_from(entries), "b.json");
  REQUIRE(first["baseline_report"]["stale"].size() == 1);
  CHECK(first["baseline_report"]["stale"][0]["case"] == "single.*");
}

TEST_CASE("strict: stale entries and xpasses are unexpected") {
  json run = make_run(true);
  add_result(run, "deleter.b", "pass");
  Baseline b = baseline_from(R"({"entries":[{"case":"deleter.b","expect":"fail","reason":"r"},
                                            {"case":"gone","expect":"fail","reason":"r"}]})");
  apply_baseline(run, b, "b.json");
  CHECK(run["summary"]["unexpected"] == 2);  // one xpass + one stale entry
  CHECK(run["summary"]["verdict"] == "fail");
  CHECK(run["summary"]["exit_code"] == 1);
}

TEST_CASE("intermittent: a pass of its case stays a pass, under --strict too; a failure is waived") {
  json run = make_run(true);
  add_result(run, "deleter.after", "pass");
  add_result(run, "deleter.other", "warn");
  Baseline b = baseline_from(R"({"entries":[{"case":"deleter.*","expect":"warn","reason":"freed code run",
                                             "intermittent":true}]})");
  REQUIRE(b.entries.size() == 1);
  CHECK(b.entries[0].intermittent);
  apply_baseline(run, b, "b.json");
  const json& r = run["results"];
  CHECK(r[0]["status"] == "pass");
  CHECK(r[0]["baseline"]["intermittent"] == true);
  CHECK(r[1]["status"] == "xfail");
  CHECK(run["baseline_report"]["xpass"].empty());
  CHECK(run["baseline_report"]["stale"].empty());
  CHECK(run["summary"]["unexpected"] == 0);
  // Applied again (restore_observed), the same.
  apply_baseline(run, b, "b.json");
  CHECK(run["results"][0]["status"] == "pass");
  CHECK(run["summary"]["unexpected"] == 0);
  // The same entry without the key: the pass is an xpass, unexpected under --strict.
  json plain = make_run(true);
  add_result(plain, "deleter.after", "pass");
  apply_baseline(plain, baseline_from(R"({"entries":[{"case":"deleter.*","expect":"warn","reason":"r"}]})"), "b.json");
  CHECK(plain["results"][0]["status"] == "xpass");
  CHECK(plain["summary"]["unexpected"] == 1);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail","reason":"r","intermittent":1}]})")
            .find("\"intermittent\" must be true or false") != std::string::npos);
  CHECK(load_error(R"({"entries":[{"case":"a","expect":"fail","reason":"r","intermittent":true,"strict":true}]})")
            .find("contradict") != std::string::npos);
}

TEST_CASE("make_baseline waives current failures and round-trips") {
  json run = make_run();
  add_result(run, "a.fail", "fail");
  add_result(run, "a.warn", "warn");
  add_result(run, "a.crash", "crash");
  add_result(run, "a.pass", "pass");
  add_result(run, "a.skip", "skip");
  add_result(run, "odd*[id]", "timeout");
  json doc = make_baseline(run);
  REQUIRE(doc["entries"].size() == 4);
  CHECK(doc["entries"][0]["case"] == "a.fail");
  CHECK(doc["entries"][0]["expect"] == "fail");
  CHECK(doc["entries"][0]["reason"] == "recorded by --write-baseline");
  // The library without its version (the file's comment keeps "lib 1.0").
  CHECK(doc["entries"][0]["when"]["subject"] == "lib");
  CHECK(doc["comment"] == "written by --write-baseline from a run of: lib 1.0");
  CHECK(doc["entries"][3]["case"] == "odd\\*\\[id\\]");

  char name[] = "/tmp/dlpv_written_XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  std::string text = doc.dump(2);
  REQUIRE(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
  Baseline b = load_baseline(name);
  std::remove(name);
  apply_baseline(run, b, "written.json");
  CHECK(run["summary"]["unexpected"] == 0);
  CHECK(run["summary"]["counts"]["xfail"] == 4);
  CHECK(run["baseline_report"]["stale"].empty());

  // Regenerating from the judged run keeps the waived cases and their reasons.
  json again = make_baseline(run);
  CHECK(again["entries"] == doc["entries"]);
}

TEST_CASE("when.subject names a library without its version, or a version glob; exact names still match") {
  json run = make_run();  // subject 0: "lib 1.0"
  run["subjects"].push_back({{"index", 1}, {"kind", "python"}, {"path", "numpy"},
                             {"name", "numpy 2.1.0"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  run["subjects"].push_back({{"index", 2}, {"kind", "plugin"}, {"path", "/x/libnumpyish.so"},
                             {"name", "numpyish 2.1.0"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  run["subjects"].push_back({{"index", 3}, {"kind", "plugin"}, {"path", "/x/libplain.so"},
                             {"name", "plain tool"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  for (int s = 0; s < 4; ++s) add_result(run, "x.case", "fail", "DEL-02", s);
  auto statuses = [&](const char* when) {
    Baseline b = baseline_from(std::string(R"({"entries":[{"case":"x.*","expect":"fail","reason":"r","when":)") +
                               when + "}]}");
    apply_baseline(run, b, "b.json");
    std::string out;
    for (const auto& r : run["results"]) out += r["status"] == "xfail" ? 'x' : '.';
    return out;
  };
  CHECK(statuses(R"({"subject":"numpy"})") == ".x..");        // any numpy, not numpyish
  CHECK(statuses(R"({"subject":"numpy 2.*"})") == ".x..");    // a version glob
  CHECK(statuses(R"({"subject":"numpy 2.1.0"})") == ".x..");  // the exact name
  CHECK(statuses(R"({"subject":"numpy 1.*"})") == "....");    // another version
  CHECK(statuses(R"({"subject":"lib"})") == "x...");
  CHECK(statuses(R"({"subject":"plain"})") == "....");        // "tool" is no version
  CHECK(statuses(R"({"subject":"plain tool"})") == "...x");
}

TEST_CASE("make_baseline scopes pair results by producer and consumer; replaying it gives no xpass") {
  json run = make_run();  // subject 0: "lib 1.0"
  run["subjects"].push_back({{"index", 1}, {"kind", "plugin"}, {"path", "/x/libother.so"},
                             {"name", "other 3.2"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  auto pair = [&](int producer, int consumer, const char* status) {
    json& r = add_result(run, "pair.float32.contiguous.legacy", status, "LAYOUT-01", producer);
    r["role"] = "pair";
    r["params"] = {{"producer", std::to_string(producer)}, {"consumer", std::to_string(consumer)}};
  };
  pair(0, 0, "pass");
  pair(0, 1, "fail");
  pair(1, 0, "crash");
  pair(1, 1, "pass");
  json doc = make_baseline(run);
  REQUIRE(doc["entries"].size() == 2);
  CHECK(doc["entries"][0]["when"] == json{{"producer", "lib"}, {"consumer", "other"}});
  CHECK(doc["entries"][1]["when"] == json{{"producer", "other"}, {"consumer", "lib"}});
  CHECK(doc["entries"][1]["expect"] == "crash");
  Baseline b = baseline_from(doc.dump());
  apply_baseline(run, b, "written.json");
  CHECK(run["summary"]["counts"]["xfail"] == 2);
  CHECK(run["summary"]["counts"]["xpass"] == 0);
  CHECK(run["summary"]["counts"]["pass"] == 2);
  CHECK(run["baseline_report"]["stale"].empty());
}

TEST_CASE("make_baseline keeps full names when two subjects differ only in version") {
  json run = make_run();  // subject 0: "lib 1.0"
  run["subjects"].push_back({{"index", 1}, {"kind", "plugin"}, {"path", "/x/liblib2.so"},
                             {"name", "lib 2.0"}, {"dlpack_version", "1.1"}, {"legacy_only", false}});
  add_result(run, "a.fail", "fail", "DEL-02", 0);
  add_result(run, "a.fail", "fail", "DEL-02", 1);
  json doc = make_baseline(run);
  REQUIRE(doc["entries"].size() == 2);
  CHECK(doc["entries"][0]["when"]["subject"] == "lib 1.0");
  CHECK(doc["entries"][1]["when"]["subject"] == "lib 2.0");
}

TEST_CASE("make_baseline carries an applied entry's issue, confirmed_by, comment and dlpack_version") {
  json run = make_run();
  add_result(run, "a.fail", "fail");
  add_result(run, "a.other", "fail");
  Baseline b = baseline_from(R"({"entries":[
    {"case":"a.f*","expect":"fail","reason":"known","issue":"https://x/1","confirmed_by":"peers/confirm/x.py lib",
     "comment":"kept","when":{"subject":"lib*","dlpack_version":"1.*"}}]})");
  apply_baseline(run, b, "b.json");
  json doc = make_baseline(run, &b);
  REQUIRE(doc["entries"].size() == 2);
  const json& e = doc["entries"][0];
  CHECK(e["case"] == "a.fail");
  CHECK(e["reason"] == "known");
  CHECK(e["issue"] == "https://x/1");
  CHECK(e["confirmed_by"] == "peers/confirm/x.py lib");
  CHECK(e["comment"] == "kept");
  CHECK(e["when"] == json{{"subject", "lib"}, {"dlpack_version", "1.*"}});
  CHECK(doc["entries"][1]["reason"] == "recorded by --write-baseline");
  // Without the baseline object, what the record holds is still kept.
  json plain = make_baseline(run);
  CHECK(plain["entries"][0]["confirmed_by"] == "peers/confirm/x.py lib");
  CHECK_FALSE(plain["entries"][0].contains("comment"));
}
