// SPDX-License-Identifier: Apache-2.0
// test_markdown.cpp: Markdown layout and the hard byte budget ($GITHUB_STEP_SUMMARY, which the
// app appends it to: tests/unit/test_step_summary.cpp).
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

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
std::string markdown(const json& run, std::size_t budget = 256 * 1024) {
  std::ostringstream s;
  write_markdown(run, s, budget);
  return s.str();
}
}  // namespace

TEST_CASE("markdown: verdict first, then counts, unexpected table, folded details") {
  json run = make_run();
  add_result(run, "c.fail", "fail")["message"] = "bad | pipe\nsecond line";
  add_result(run, "c.skip", "skip");
  add_result(run, "c.pass", "pass");
  finalize_summary(run);
  std::string md = markdown(run);
  INFO(md);
  CHECK(md.rfind("## ❌ dlpack-validate: FAIL (1 unexpected of 3 cases)\n", 0) == 0);
  auto counts = md.find("| pass | fail | warn | skip | xfail | xpass | crash | timeout | error |");
  auto table = md.find("### Unexpected results");
  auto skipped = md.find("<details><summary>Skipped (1)</summary>");
  auto others = md.find("<details><summary>Other results (1)</summary>");
  CHECK(counts < table);
  CHECK(table < skipped);
  CHECK(skipped < others);
  CHECK(others != std::string::npos);
  CHECK(md.find("| `c.fail` | lib 1.0 | `DEL-02` | **fail** | bad \\| pipe… |") != std::string::npos);
  CHECK(count_of(md, "<details>") == count_of(md, "</details>"));
}

TEST_CASE("markdown: a passing run says so") {
  json run = make_run();
  add_result(run, "c.pass", "pass");
  finalize_summary(run);
  std::string md = markdown(run);
  CHECK(md.rfind("## ✅ dlpack-validate: PASS", 0) == 0);
  CHECK(md.find("No unexpected results.") != std::string::npos);
}

TEST_CASE("markdown: output never exceeds the budget and says what was left out") {
  json run = make_run();
  for (int i = 0; i < 3000; ++i) add_result(run, "case.number." + std::to_string(i), i % 3 ? "fail" : "skip");
  finalize_summary(run);
  for (std::size_t budget : {std::size_t{200}, std::size_t{1000}, std::size_t{4096},
                             std::size_t{64 * 1024}}) {
    CAPTURE(budget);
    std::string md = markdown(run, budget);
    CHECK(md.size() <= budget);
    if (budget >= 1000) {
      CHECK(md.find("more, see the HTML/JSON report.") != std::string::npos);
      CHECK(count_of(md, "<details>") == count_of(md, "</details>"));
      // Shown rows + announced remainder account for every result.
      std::size_t shown = count_of(md, "| `case.number.");
      auto pos = md.find("… and ");
      REQUIRE(pos != std::string::npos);
      std::size_t more = std::stoul(md.substr(pos + std::string("… and ").size()));
      CHECK(shown + more == 3000);
    }
  }
  std::string tiny = markdown(run, 10);
  CHECK(tiny.size() <= 10);
  std::string whole = markdown(run, 100 * 1024 * 1024);
  CHECK(whole.find("more, see") == std::string::npos);
}
