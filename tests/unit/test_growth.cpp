// tests/unit/test_growth.cpp: the leak judgement over export/delete cycles (judge_growth_by,
// cases/support/helpers.cpp), fed scripted heap readings: what a clean loop, memory released
// later, a pool's one step and a leak each read as.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>

#include "../../cases/support/helpers.hpp"
#include "idle_subject.hpp"

#include <vector>

using namespace dlpv;

namespace {
struct Judged {
  CaseOutcome out;
  std::vector<std::string> notes;
  std::vector<int> asked;  // the cycle counts measured, in order
};

// Runs judge_growth_by over 4,000 cycles, answering its measurements with `readings` in turn.
Judged judge(std::vector<long long> readings) {
  CaseInfo info;
  info.id = "t.growth";
  info.severity = Severity::must;
  IdleSubject subject;
  CaseContext ctx(info, subject);
  Judged j;
  size_t next = 0;
  cases::judge_growth_by(ctx, 4000, "DEL-01", "export/delete cycles", [&](int n) {
    j.asked.push_back(n);
    REQUIRE(next < readings.size());
    return readings[next++];
  });
  j.notes = ctx.notes();
  j.out = ctx.finish(nullptr, nullptr);
  return j;
}

bool any_note_has(const Judged& j, const std::string& text) {
  for (const auto& n : j.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("a clean loop passes at the first look, over a quarter of the cycles") {
  auto j = judge({1000});
  CHECK(j.out.status == Status::pass);
  CHECK(j.asked == std::vector<int>{1000});
}

TEST_CASE("growth under 64 KiB over all the cycles passes") {
  auto j = judge({8192, 60000});
  CHECK(j.out.status == Status::pass);
  CHECK(j.asked == std::vector<int>{1000, 4000});
}

TEST_CASE("growth that does not grow with the cycles is memory released later") {
  auto j = judge({8192, 200000, 500});
  CHECK(j.out.status == Status::pass);
  CHECK(j.asked == std::vector<int>{1000, 4000, 8000});
  CHECK(any_note_has(j, "released later"));
}

TEST_CASE("a pool's step seen in the doubled window but not in a second one is not a leak") {
  // dpnp 0.20.0 beside two other dpnp tests: 150 KiB over 4,000 copy=True cycles, 640 KiB over 8,000.
  auto j = judge({8192, 150416, 642944, 3000});
  CHECK(j.out.status == Status::pass);
  CHECK(j.asked == std::vector<int>{1000, 4000, 8000, 8000});
  CHECK(any_note_has(j, "did not come again"));
}

TEST_CASE("a leak grows in both doubled windows and fails") {
  auto j = judge({40000, 160000, 320000, 320000});
  CHECK(j.out.status == Status::fail);
  CHECK(j.asked == std::vector<int>{1000, 4000, 8000, 8000});
  CHECK(j.out.observed.find("320000 and 320000 bytes over 8000 cycles each") != std::string::npos);
  CHECK(j.out.message.find("DEL-01") != std::string::npos);
}

TEST_CASE("the second window must grow as much as the first doubled one, not only pass 64 KiB") {
  // 160 KiB over 4,000 then 320 KiB over 8,000, then 100 KiB: under 1.5 times the 4,000's.
  auto j = judge({40000, 160000, 320000, 100000});
  CHECK(j.out.status == Status::pass);
}
