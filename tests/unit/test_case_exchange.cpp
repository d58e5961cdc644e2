// tests/unit/test_case_exchange.cpp: the case exchange's phase budgets. Whatever phases a
// worker announces, and however often, one command ends by its load budget plus its case
// budget: no event refills a pot (the hole a worker announcing "load" again and again used to
// keep a case alive forever through).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include "case_exchange.hpp"
#include "worker_pool.hpp"

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

// The pace a case's time limit follows (worker_pool.hpp, docs/design.md §7).

TEST_CASE("pace: quiet is 1, a busy machine scales the limit, bounded, and the clean cases outweigh the load") {
  dlpv::PaceMeter m(2);
  CHECK(m.pace(0) == 1.0);  // no evidence yet
  m.loaded({0, 1}, 0.01, 0.05);
  CHECK(m.pace(0) == 1.0);  // 10 ms on a core: too little to believe
  m.loaded({0}, 0.2, 0.02);
  CHECK(m.pace(0) == doctest::Approx(1.3));  // loads: (0.21 + 0.07) / 0.21 = 1.33, to the nearest tenth
  m.ran(0, 0.1, 0.2);       // cases waited twice as long as they ran: pace 3
  CHECK(m.pace(0) == doctest::Approx(3.0));
  CHECK(m.pace(1) == 1.0);  // subject 1: only 10 ms of load evidence
  m.ran(1, 0.06, 10.0);     // far busier than the cap
  CHECK(m.pace(1) == dlpv::PaceMeter::kMaxPace);
  m.ran(0, 0.06, 0.001);    // a quieter spell: the sums move toward it
  CHECK(m.pace(0) < 3.0);
  CHECK(m.pace(-1) == 1.0);
  CHECK(m.pace(7) == 1.0);
  // Past the window the sums are halved: the pace follows the machine now, not an hour ago.
  dlpv::PaceMeter w(1);
  w.ran(0, 1.9, 19.0);
  CHECK(w.pace(0) == dlpv::PaceMeter::kMaxPace);
  for (int i = 0; i < 20; ++i) w.ran(0, 1.0, 0.0);
  CHECK(w.pace(0) == 1.0);
}
