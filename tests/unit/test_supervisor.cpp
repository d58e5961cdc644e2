// tests/unit/test_supervisor.cpp: worker isolation: crashes and hangs become results and
// the run continues; load errors are reported.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/plugin_subject.hpp>
#include <dlpack_validate/runner.hpp>
#include <signal.h>

#include <set>

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
  // The first crash ends a worker and the next case gets a fresh one; from then on a spare is
  // kept warm (started while that case runs, ended unused at the end of the run).
  CHECK(r.workers_started == 3);
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
  // The reference plugin is built on DLPack 1.3's header: it refuses bcomplex32 (main only), a skip.
  for (const auto& c : r.results)
    CHECK((c.outcome.status == Status::pass ||
           (c.outcome.status == Status::skip && c.info->id.find(".bcomplex32.") != std::string::npos)));
}

TEST_CASE("a missing entry point is a load error") {
  RunOptions o;
  o.subject_paths = {"/lib/x86_64-linux-gnu/libm.so.6"};  // an ELF library without the entry point
  o.worker_command = {DLPV_VALIDATOR_EXE};
  o.loader = load_plugin_subject;
  CHECK_THROWS_AS(run_cases(o, select_cases({"consumer.roundtrip.*"})), SubjectLoadError);
}

TEST_CASE("workers that die with no case in flight: the supervisor lives (SIGPIPE at its default)") {
  // The library arms a 1 ms interval timer at load: its workers die idle, before accepting a
  // command, or in a case. Writing a command into a dead worker's pipe must not end us.
  struct sigaction old {};
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, &old);
  RunResult r = run_on(DLPV_ITIMER_PLUGIN, {"producer.*", "consumer.*"}, Isolation::worker, 2.0);
  sigaction(SIGPIPE, &old, nullptr);
  std::set<std::string> ids;
  for (const auto& c : r.results) ids.insert(c.info->id);
  size_t not_run = 0;
  for (const auto& n : r.not_run) not_run += n.cases.size();
  CHECK(ids.size() == r.results.size());  // one result per case
  CHECK(r.results.size() + not_run == select_cases({"producer.*", "consumer.*"}).size());
  int deaths = static_cast<int>(r.incidents.size());
  for (const auto& c : r.results) deaths += c.outcome.status == Status::crash;
  CHECK(deaths > 0);
  for (const auto& i : r.incidents) CHECK(i.signal.find("SIGALRM") != std::string::npos);
}

TEST_CASE("a result forged into the event pipe is not believed, and the case keeps its verdict") {
  // A real dtype bug (fail) under a library that writes well-formed "pass" results into every
  // pipe it finds: the forgeries carry no nonce of the validator's, so they are charged to the
  // library as an incident each, and the case ends with its own verdict (the bug's fail).
  for (Isolation iso : {Isolation::worker, Isolation::per_case}) {
    RunResult r = run_on(DLPV_FORGE_PLUGIN, {"consumer.refuse.dtype.float4_bits8.*"}, iso);
    REQUIRE(r.results.size() == 2);
    for (const auto& c : r.results) {
      CHECK(c.outcome.status == Status::fail);
      CHECK(c.outcome.message.find("forged") == std::string::npos);
    }
    REQUIRE(r.incidents.size() == 2);
    for (const auto& i : r.incidents) {
      CHECK(i.kind == "intrusion");
      CHECK(i.subject == 0);
      CHECK(i.message.find("2 lines") != std::string::npos);
      CHECK(i.message.find("fail result was kept") != std::string::npos);
    }
  }
}

TEST_CASE("a library that dies at load: one result for the load, every case once as not run") {
  RunResult r = run_on(DLPV_CTOR_ABORT_PLUGIN, {"consumer.roundtrip.*"}, Isolation::worker);
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].info->id == "subject.load");
  CHECK(r.results[0].outcome.status == Status::crash);
  CHECK(r.results[0].outcome.phase == "load");
  CHECK(r.results[0].outcome.signal.find("SIGABRT") != std::string::npos);
  REQUIRE(r.not_run.size() == 1);
  CHECK(r.not_run[0].cases.size() == select_cases({"consumer.roundtrip.*"}).size());
  CHECK(r.not_run[0].reason.find("crashes at load") != std::string::npos);
}

TEST_CASE("selection: --exclude and --requirement narrow --filter") {
  const auto all = select_cases(Selection{{"consumer.roundtrip.*"}, {}, {}, {}});
  const auto no_legacy = select_cases(Selection{{"consumer.roundtrip.*"}, {"*.legacy"}, {}, {}});
  CHECK(no_legacy.size() * 2 == all.size());
  for (const CaseInfo* c : no_legacy) CHECK(c->id.find(".legacy") == std::string::npos);
  const auto layout = select_cases(Selection{{}, {}, {"LAYOUT-1?"}, {}});
  REQUIRE(!layout.empty());
  for (const CaseInfo* c : layout) {
    bool cites = false;
    for (const auto& q : c->requirements) cites = cites || q.rfind("LAYOUT-1", 0) == 0;
    CHECK_MESSAGE(cites, c->id);
  }
}

TEST_CASE("-x: the run stops after the result the predicate picks; the rest is listed once as not run") {
  for (Isolation iso : {Isolation::worker, Isolation::none}) {
    RunOptions o;
    o.subject_paths = {DLPV_REFERENCE_PLUGIN};
    o.isolation = iso;
    o.worker_command = {DLPV_VALIDATOR_EXE};
    o.loader = load_plugin_subject;
    int asked = 0;
    o.stop_after = [&](const std::vector<SubjectInfo>&, const CaseResult&) { return ++asked == 2; };
    std::vector<std::pair<size_t, size_t>> seen;
    o.progress = [&](size_t done, size_t total, const std::string&) { seen.emplace_back(done, total); };
    const auto cases = select_cases(Selection{{"consumer.roundtrip.float32.*", "consumer.byte_offset.*"}, {}, {}, {}});
    REQUIRE(cases.size() == 4);
    RunResult r = run_cases(o, cases);
    CHECK(r.results.size() == 2);
    REQUIRE(r.not_run.size() == 1);
    CHECK(r.not_run[0].cases.size() == 2);
    CHECK(r.not_run[0].reason.find("--exitfirst") != std::string::npos);
    REQUIRE(seen.size() == 3);  // before each of the two cases run, and the end
    CHECK(seen[0] == std::make_pair(size_t{0}, size_t{4}));
    CHECK(seen[2] == std::make_pair(size_t{2}, size_t{2}));
  }
}

TEST_CASE("a skip the subject's description settles costs no worker, under every isolation mode") {
  for (Isolation iso : {Isolation::worker, Isolation::per_case}) {
    RunResult r = run_on(DLPV_REFERENCE_PLUGIN, {"device.producer.*"}, iso);
    REQUIRE(!r.results.empty());
    REQUIRE(r.subjects.size() == 1);
    const auto absent = r.subjects[0].absent.find("cuda_driver");
    if (absent == r.subjects[0].absent.end()) continue;  // this machine has CUDA: the cases run
    CHECK(r.workers_started == 1);  // the one that loaded and described the subject
    for (const auto& c : r.results) {
      CHECK(c.outcome.status == Status::skip);
      CHECK(c.outcome.message == absent->second);  // need_cuda's words, as the worker gives them
    }
  }
}

TEST_CASE("-k: pytest's keyword expressions over case ids") {
  CHECK(keyword_match("roundtrip", "consumer.roundtrip.float32.contiguous.legacy"));
  CHECK(keyword_match("ROUNDTRIP and legacy", "consumer.roundtrip.float32.contiguous.legacy"));
  CHECK_FALSE(keyword_match("roundtrip and not legacy", "consumer.roundtrip.float32.contiguous.legacy"));
  CHECK(keyword_match("deleter or (roundtrip and float32)", "consumer.roundtrip.float32.contiguous.legacy"));
  CHECK_FALSE(keyword_match("not (roundtrip or deleter)", "consumer.roundtrip.float32.contiguous.legacy"));
  CHECK(keyword_match("not not roundtrip", "consumer.roundtrip.float32.contiguous.legacy"));
  for (const char* bad : {"", "and x", "(x", "x)", "x or", "x y"}) CHECK_THROWS_AS(keyword_match(bad, "x"), std::invalid_argument);
  const auto k = select_cases(Selection{{}, {}, {}, {"roundtrip and float32 and not legacy"}});
  REQUIRE(!k.empty());
  for (const CaseInfo* c : k) {
    CHECK(c->id.find("roundtrip") != std::string::npos);
    CHECK(c->id.find("legacy") == std::string::npos);
  }
}
