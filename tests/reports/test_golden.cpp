// SPDX-License-Identifier: Apache-2.0
// test_golden.cpp: byte-exact golden files for every writer over the handcrafted records in
// data/. Set DLPV_UPDATE_GOLDEN=1 to rewrite golden/ after an intended change, then review
// the diff. For data/NAME.json, data/NAME.baseline.json (if present) is applied first.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "dlpack_validate/reports.hpp"
#include "dlpack_validate/verdict.hpp"
#include "test_support.hpp"

using namespace dlpv::reports;
using namespace dlpv::verdict;
using dlpv_test::json;

namespace {

bool update_mode() {
  const char* v = std::getenv("DLPV_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// Line number (1-based) of the first difference, for a readable failure.
std::size_t first_diff_line(const std::string& a, const std::string& b) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return line;
    if (a[i] == '\n') ++line;
  }
  return line;
}

void check_golden(const std::string& name, const std::string& actual) {
  std::string path = dlpv_test::test_dir() + "/golden/" + name;
  if (update_mode()) {
    dlpv_test::spit(path, actual);
    MESSAGE("updated " << path);
    return;
  }
  std::ifstream in(path);
  INFO("golden file " << path << " (rerun with DLPV_UPDATE_GOLDEN=1 to regenerate)");
  REQUIRE(in.good());
  std::string expected = dlpv_test::slurp(path);
  INFO("first difference at line " << first_diff_line(expected, actual));
  CHECK(expected == actual);
}

json judged(const std::string& name) {
  std::string data = dlpv_test::test_dir() + "/data/";
  json run = load_run(data + name + ".json");
  std::ifstream has_baseline(data + name + ".baseline.json");
  if (has_baseline.good()) {
    // The recorded path is the relative one so the golden files do not depend on checkouts.
    apply_baseline(run, load_baseline(data + name + ".baseline.json"), name + ".baseline.json");
  }
  finalize_summary(run);
  return run;
}

void check_all_writers(const std::string& name) {
  json run = judged(name);
  for (const Format& f : formats()) {  // every report format, named NAME + its extension
    std::ostringstream text;
    f.write(run, text);
    check_golden(name + f.extension, text.str());
  }
  check_golden(name + ".txt", text_summary(run));
  check_golden(name + ".write-baseline.json", make_baseline(run).dump(2) + "\n");
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("golden: single subject, hostile strings, baseline applied") { check_all_writers("single"); }
  TEST_CASE("golden: two subjects with pairs, legacy-only, strict") { check_all_writers("pairs"); }
  TEST_CASE("golden: bench section (routes, unavailable, error, regression)") { check_all_writers("bench"); }
  TEST_CASE("golden: clean passing run") { check_all_writers("clean"); }
}
