// tests/unit/test_supervisor.cpp: worker isolation: crashes and hangs become results and
// the run continues; load errors are reported.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/runner.hpp>

using namespace dlpv;

namespace {
RunResult run_on(const char* plugin, const std::vector<std::string>& filters, Isolation iso,
                 double timeout = 10.0) {
  RunOptions o;
  o.subject_paths = {plugin};
  o.filters = filters;
  o.isolation = iso;
  o.timeout_s = timeout;
  o.worker_command = {DLPV_VALIDATOR_EXE};
  o.loader = load_plugin_subject;
  return run_cases(o, select_cases(filters));
}
}  // namespace

TEST_CASE("reference plugin passes through a reused worker") {
  RunResult r = run_on(DLPV_REFERENCE_PLUGIN, {"consumer.roundtrip.float32.*"}, Isolation::worker);
  REQUIRE(r.results.size() == 2);
  for (const auto& c : r.results) CHECK(c.outcome.status == Status::pass);
  CHECK(r.workers_started == 1);
  REQUIRE(r.subjects.size() == 1);
  CHECK(r.subjects[0].dlpack_version.major == 1);
}

TEST_CASE("a segfault in the library is a crash with the signal and phase; the run goes on") {
  RunResult r = run_on(DLPV_SEGFAULT_PLUGIN, {"producer.tensor.float32.contiguous.*", "consumer.roundtrip.float32.*"},
                       Isolation::worker);
  REQUIRE(r.results.size() == 4);
  int crashes = 0, passes = 0;
  for (const auto& c : r.results) {
    if (c.outcome.status == Status::crash) {
      ++crashes;
      CHECK(c.outcome.signal.find("SIGSEGV") != std::string::npos);
      CHECK(c.outcome.phase == "export");
    }
    if (c.outcome.status == Status::pass) ++passes;
  }
  CHECK(crashes == 2);
  CHECK(passes == 2);
  CHECK(r.workers_started == 2);  // the first crash ends a worker; the next case gets a fresh one
}

TEST_CASE("a hang is a timeout naming the phase") {
  RunResult r = run_on(DLPV_HANG_PLUGIN, {"consumer.roundtrip.float32.contiguous.*"}, Isolation::worker, 0.5);
  REQUIRE(r.results.size() == 2);
  for (const auto& c : r.results) {
    if (c.info->id.find("legacy") != std::string::npos) {
      CHECK(c.outcome.status == Status::timeout);
      CHECK(c.outcome.phase == "import");
    } else {
      CHECK(c.outcome.status == Status::pass);
    }
  }
}

TEST_CASE("per-case isolation starts one worker per case") {
  RunResult r = run_on(DLPV_REFERENCE_PLUGIN, {"consumer.roundtrip.*"}, Isolation::per_case);
  CHECK(r.workers_started == static_cast<int>(r.results.size()));  // one per case
  for (const auto& c : r.results) CHECK(c.outcome.status == Status::pass);
}

TEST_CASE("a missing entry point is a load error") {
  RunOptions o;
  o.subject_paths = {"/lib/x86_64-linux-gnu/libm.so.6"};  // an ELF library without the entry point
  o.worker_command = {DLPV_VALIDATOR_EXE};
  o.loader = load_plugin_subject;
  CHECK_THROWS_AS(run_cases(o, select_cases({"consumer.roundtrip.*"})), SubjectLoadError);
}
