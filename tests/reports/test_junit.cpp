// SPDX-License-Identifier: Apache-2.0
// test_junit.cpp: JUnit counting and status mapping (structure is also checked by
// check_junit.py with a real XML parser).
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"
#include "test_support.hpp"

using namespace dlpv::reports;
using namespace dlpv::verdict;
using dlpv_test::add_result;
using dlpv_test::count_of;
using dlpv_test::json;
using dlpv_test::make_run;

namespace {
std::string junit(const json& run) {
  std::ostringstream s;
  write_junit(run, s);
  return s.str();
}
}  // namespace

TEST_CASE("junit counts cases, not checks, and maps every status") {
  json run = make_run();
  // The failure's type is the requirement that failed: the first failing check's, not the
  // first one the case cites.
  json& f = add_result(run, "c.fail", "fail", "LAYOUT-07");
  f["requirements"] = json::array({"LAYOUT-07", "LAYOUT-08", "LAYOUT-09", "LAYOUT-10"});
  f["checks"] = json::array({json{{"requirement", "LAYOUT-07"}, {"status", "pass"}},
                             json{{"requirement", "LAYOUT-08"}, {"status", "fail"}},
                             json{{"requirement", "LAYOUT-09"}, {"status", "fail"}},
                             json{{"requirement", "LAYOUT-10"}, {"status", "pass"}}});
  add_result(run, "c.pass", "pass");
  add_result(run, "c.warn", "warn");
  add_result(run, "c.skip", "skip");
  add_result(run, "c.xfail", "xfail")["baseline"] = {{"case", "c.*"}, {"expect", "fail"},
                                                     {"reason", "known bug"}, {"issue", "https://i/9"}};
  add_result(run, "c.xpass", "xpass");
  json& crash = add_result(run, "c.crash", "crash");
  crash["signal"] = "SIGSEGV (11)";
  crash["phase"] = "deleter";
  crash["output_tail"] = "boom\n";
  add_result(run, "c.timeout", "timeout");
  add_result(run, "c.error", "error");
  finalize_summary(run);
  std::string x = junit(run);
  INFO(x);
  CHECK(x.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 0) == 0);
  CHECK(count_of(x, "<testcase ") == 9);
  CHECK(count_of(x, "<testsuite ") == 1);
  CHECK(x.find("tests=\"9\" failures=\"1\" errors=\"3\" skipped=\"2\"") != std::string::npos);
  CHECK(x.find("<failure type=\"LAYOUT-08\" message=\"message for c.fail\">") != std::string::npos);
  CHECK(x.find("<skipped type=\"skip\" message=\"message for c.skip\">") != std::string::npos);
  CHECK(x.find("<skipped type=\"xfail\" message=\"expected failure: known bug (https://i/9)\">") !=
        std::string::npos);
  CHECK(x.find("<error type=\"crash\" message=\"the library under test crashed (SIGSEGV (11)) in its deleter; the "
               "validator survived and went on") != std::string::npos);
  CHECK(x.find("<error type=\"timeout\" message=\"no result within 10.0 s") != std::string::npos);
  CHECK(x.find("<error type=\"harness-error\"") != std::string::npos);
  CHECK(x.find("<system-out>warning (SHOULD not met") != std::string::npos);
  CHECK(x.find("<system-err>boom\n</system-err>") != std::string::npos);
  CHECK(x.find("classname=\"dlpack-validate.lib_1_0.deleter\"") != std::string::npos);
  CHECK(x.find("time=\"0.002\"") != std::string::npos);  // 0.0015 with three decimals

  run["options"]["strict"] = true;
  finalize_summary(run);
  x = junit(run);
  CHECK(x.find("tests=\"9\" failures=\"3\" errors=\"3\" skipped=\"2\"") != std::string::npos);
  CHECK(x.find("<failure type=\"warn\"") != std::string::npos);
  CHECK(x.find("<failure type=\"xpass\"") != std::string::npos);
}

TEST_CASE("junit: one testsuite per subject, duplicate names disambiguated, hostile text escaped") {
  json run = make_run();
  run["subjects"].push_back({{"index", 1}, {"kind", "plugin"}, {"path", "b.so"},
                             {"name", "lib 1.0"}, {"dlpack_version", "0.8"}, {"legacy_only", true},
                             {"capabilities", json::array({"export_legacy"})}});
  add_result(run, "same.id", "pass", "DEL-02", 0);
  add_result(run, "same.id", "pass", "DEL-02", 0);
  json& h = add_result(run, "hostile", "fail", "DEL-02", 1);
  h["message"] = "a <b> \"q\" ]]> \x01 \xff";
  h["output_tail"] = "]]><![CDATA[\x1b[0m";
  finalize_summary(run);
  std::string x = junit(run);
  INFO(x);
  CHECK(count_of(x, "<testsuite ") == 2);
  CHECK(x.find("name=\"same.id #2\"") != std::string::npos);
  CHECK(x.find("dlpack-validate.lib_1_0_1.deleter") != std::string::npos);  // same name, 2nd subject
  CHECK(x.find("message=\"a &lt;b&gt; &quot;q&quot; ]]&gt; \\x01 \\xFF\"") != std::string::npos);
  CHECK(x.find("]]&gt;&lt;![CDATA[\\x1B[0m") != std::string::npos);
  CHECK(x.find('\x01') == std::string::npos);
  CHECK(x.find("legacy-only DLPack producer (no versioned export)") != std::string::npos);
}

TEST_CASE("junit: stale baseline entries are testcases of a baseline suite, failing only under strict") {
  json run = make_run();
  add_result(run, "c.fail", "fail");
  run["baseline_report"] = {{"path", "known.json"},
                            {"sha256", "ab"},
                            {"stale", json::array({json{{"case", "gone.*"}, {"expect", "crash"}, {"reason", "old <crash>"},
                                                        {"when", {{"subject", "lib"}}}},
                                                   json{{"case", "gone.*"}, {"expect", "crash"}, {"reason", "again"},
                                                        {"when", {{"subject", "lib"}}}}})},
                            {"xpass", json::array()}};
  finalize_summary(run);
  std::string x = junit(run);
  INFO(x);
  CHECK(count_of(x, "<testsuite ") == 2);
  CHECK(x.find("<testsuite name=\"dlpack-validate baseline\" tests=\"2\" failures=\"0\" errors=\"0\" skipped=\"2\"") !=
        std::string::npos);
  CHECK(x.find("classname=\"dlpack-validate.baseline.stale\" name=\"stale: gone.* [subject=lib]\"") != std::string::npos);
  CHECK(x.find("name=\"stale: gone.* [subject=lib] #2\"") != std::string::npos);  // names stay distinct
  CHECK(x.find("<skipped type=\"stale-baseline-entry\" message=\"stale baseline entry: expects crash for gone.* "
               "(subject=lib) but matched no result (fails the run only with --strict)\">") != std::string::npos);
  CHECK(x.find("reason: old &lt;crash&gt;") != std::string::npos);
  CHECK(x.find("<testsuites name=\"dlpack-validate\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"2\"") !=
        std::string::npos);

  run["options"]["strict"] = true;
  finalize_summary(run);
  x = junit(run);
  CHECK(x.find("<failure type=\"stale-baseline-entry\"") != std::string::npos);
  CHECK(x.find("<testsuites name=\"dlpack-validate\" tests=\"3\" failures=\"3\" errors=\"0\" skipped=\"0\"") !=
        std::string::npos);
}
