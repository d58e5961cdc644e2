// tests/unit/test_case_exchange.cpp: the case exchange's phase budgets. Whatever phases a
// worker announces, and however often, one command ends by its load budget plus its case
// budget: no event refills a pot (the hole a worker announcing "load" again and again used to
// keep a case alive forever through).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "case_exchange.hpp"

using dlpv::exchange::Clock;
using dlpv::exchange::PhaseClock;

namespace {
Clock::duration ms(long long n) { return std::chrono::milliseconds(n); }
}  // namespace

TEST_CASE("phase clock: the case's time is the case budget when nothing loads") {
  const Clock::time_point t0{};
  PhaseClock c(120.0, 10.0, t0);
  CHECK(c.deadline() == t0 + ms(10000));
  c.enter("export", t0 + ms(4000));
  CHECK(c.deadline() == t0 + ms(10000));  // a new phase buys no time
}

TEST_CASE("phase clock: loading before the case is charged to the load budget") {
  const Clock::time_point t0{};
  PhaseClock c(120.0, 10.0, t0);
  c.enter("load", t0 + ms(1000));        // 1 s of setup charged to the case
  CHECK(c.deadline() == t0 + ms(121000));
  c.enter("export", t0 + ms(31000));     // 30 s of loading charged to the load budget
  CHECK(c.deadline() == t0 + ms(40000)); // 9 s of case time left
  c.enter("loading", t0 + ms(35000));    // a helper process imports: 90 s of load budget left
  CHECK(c.deadline() == t0 + ms(125000));
}

TEST_CASE("phase clock: alternating phases never pass load + case, the absolute ceiling") {
  const Clock::time_point t0{};
  PhaseClock c(2.0, 1.0, t0);
  Clock::time_point now = t0;
  const char* phases[] = {"load", "deleter", "loading", "export"};
  for (int i = 0; i < 1000 && now < c.deadline(); ++i) {
    now += ms(50);
    c.enter(phases[i % 4], now);
  }
  CHECK(now <= t0 + ms(3000));
  CHECK(c.deadline() <= t0 + ms(3000));
  CHECK(now >= c.deadline());
}
