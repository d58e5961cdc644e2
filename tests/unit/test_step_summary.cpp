// SPDX-License-Identifier: Apache-2.0
// test_step_summary.cpp: the app appends the Markdown report to $GITHUB_STEP_SUMMARY only when it
// is set, twice for two runs, and never throws (app/src/step_summary.cpp).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <dlpack_validate/app.hpp>
#include <dlpack_validate/verdict.hpp>

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("append_step_summary writes only when GITHUB_STEP_SUMMARY is set and never throws") {
  nlohmann::ordered_json run = {{"schema", "dlpack-validate/run"}, {"schema_version", 1},
                                {"subjects", {{{"index", 0}, {"name", "lib 1.0"}}}},
                                {"results", {{{"id", "c.pass"}, {"subject", 0}, {"status", "pass"}}}}};
  dlpv::verdict::finalize_summary(run);
  ::unsetenv("GITHUB_STEP_SUMMARY");
  CHECK_FALSE(dlpv::append_step_summary(run));
  ::setenv("GITHUB_STEP_SUMMARY", "", 1);
  CHECK_FALSE(dlpv::append_step_summary(run));

  const std::string path = "/tmp/dlpv_step_summary_test_" + std::to_string(::getpid()) + ".md";
  std::ofstream(path) << "previous step\n";
  ::setenv("GITHUB_STEP_SUMMARY", path.c_str(), 1);
  CHECK(dlpv::append_step_summary(run));
  CHECK(dlpv::append_step_summary(run));
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  CHECK(text.str().rfind("previous step\n## ", 0) == 0);
  CHECK(count_of(text.str(), "dlpack-validate: PASS") == 2);
  std::remove(path.c_str());

  ::setenv("GITHUB_STEP_SUMMARY", "/nonexistent-dir/summary.md", 1);
  CHECK_FALSE(dlpv::append_step_summary(run));
  ::unsetenv("GITHUB_STEP_SUMMARY");
}
