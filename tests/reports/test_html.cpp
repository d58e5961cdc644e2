// SPDX-License-Identifier: Apache-2.0
// test_html.cpp: HTML structure and escaping (the browser test renders it for real).
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
std::string html(const json& run) {
  std::ostringstream s;
  write_html(run, s);
  return s.str();
}
}  // namespace

TEST_CASE("html: sections in order, embedded record round-trips") {
  json run = load_run(dlpv_test::test_dir() + "/data/pairs.json");
  finalize_summary(run);
  std::string h = html(run);
  std::size_t last = 0;
  for (const char* id : {"id=\"verdict\"", "id=\"unexpected\"", "id=\"subjects\"",
                         "id=\"requirement-matrix\"", "id=\"support-matrix\"", "id=\"pair-matrix\"",
                         "id=\"results\"", "id=\"run-record\""}) {
    CAPTURE(id);
    auto pos = h.find(id);
    REQUIRE(pos != std::string::npos);
    CHECK(pos > last);
    last = pos;
  }
  CHECK(h.find("legacy-only DLPack producer (no versioned export)") != std::string::npos);
  const std::string open = "<script type=\"application/json\" id=\"run-record\">";
  auto begin = h.find(open) + open.size();
  auto end = h.find("</script>", begin);
  CHECK(json::parse(h.substr(begin, end - begin)) == run);
  // Only two script elements: the data block and the enhancement script.
  CHECK(count_of(h, "<script") == 2);
  CHECK(h.find("http://") == std::string::npos);
  CHECK(h.find("https://example.org") != std::string::npos);  // issue URL shown as text only
  CHECK(h.find("src=") == std::string::npos);
}

TEST_CASE("html: hostile library strings are escaped, pair matrix omitted without pairs") {
  json run = make_run();
  run["subjects"][0]["name"] = "<script>alert(1)</script>";
  json& r = add_result(run, "c.fail", "fail");
  r["message"] = "</script><img onerror=x> ]]> \x01";
  r["output_tail"] = "<!-- \xff";
  finalize_summary(run);
  std::string h = html(run);
  CHECK(count_of(h, "<script") == 2);
  CHECK(h.find("<img") == std::string::npos);
  CHECK(h.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(h.find("&lt;!-- \\xFF") != std::string::npos);
  CHECK(h.find('\x01') == std::string::npos);
  CHECK(h.find("id=\"pair-matrix\"") == std::string::npos);
  CHECK(h.find("id=\"support-matrix\"") != std::string::npos);
}

TEST_CASE("html: writers tolerate a bare record") {
  json run = {{"schema", "dlpack-validate/run"}, {"schema_version", 1}, {"results", json::array({json{{"id", "x"}}})}};
  std::ostringstream h, j, m;
  write_html(run, h);
  write_junit(run, j);
  write_markdown(run, m);
  CHECK(h.str().find("id=\"verdict\"") != std::string::npos);
  CHECK(j.str().find("(no subject)") != std::string::npos);
  CHECK(m.str().find("FAIL (1 unexpected of 1 cases)") != std::string::npos);  // status missing = error
}

TEST_CASE("html: unexpected results grouped by requirement and cause, identical ones collapsed") {
  json run = make_run();
  run["subjects"].push_back({{"index", 1}, {"kind", "plugin"}, {"path", "b.so"}, {"name", "lib B"}});
  auto fail = [&](const std::string& id, long long subject, const std::string& req, const std::string& role) {
    json& r = add_result(run, id, "fail");
    r["subject"] = subject;
    r["role"] = role;
    r["requirements"] = json::array({"DEL-02", req});
    r["message"] = "[" + req + "] elements differ";
    r["expected"] = "the reference pattern";
    r["observed"] = "3 of 12 differ";
    r["checks"] = json::array({{{"requirement", req}, {"status", "fail"}, {"message", "differ"}}});
  };
  fail("pair.x", 0, "LAYOUT-01", "pair");
  fail("pair.x", 1, "LAYOUT-01", "pair");  // identical but for the subject: one line, x2
  fail("producer.a", 1, "LAYOUT-07", "producer");
  fail("producer.b", 1, "LAYOUT-07", "producer");
  for (int i = 0; i < 5; ++i) {
    json& r = add_result(run, "device.cuda" + std::to_string(i), "skip");
    r["area"] = "device";
    r["message"] = "no CUDA driver";
  }
  finalize_summary(run);
  std::string h = html(run);
  // The single-subject group first, linked from the banner; the pair group after it.
  auto att = h.find("id=\"unexpected\"");
  auto g1 = h.find("id=\"att-1\"", att), g2 = h.find("id=\"att-2\"", att);
  REQUIRE(g1 != std::string::npos);
  REQUIRE(g2 != std::string::npos);
  CHECK(h.find("LAYOUT-07", g1) < g2);
  CHECK(h.find("LAYOUT-01", g2) != std::string::npos);
  CHECK(h.find("href=\"#att-1\"") < att);
  CHECK(h.find("&times;2: [LAYOUT-07] elements differ") != std::string::npos);  // one cause, two cases
  CHECK(h.find("<code>pair.x</code> &times;2 <small>on lib 1.0; lib B</small>") != std::string::npos);
  // The all-skip area is one folded line saying why.
  CHECK(h.find("skip</span> (all): 5 &mdash; no CUDA driver</summary>") != std::string::npos);
}
