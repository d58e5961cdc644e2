// tests/unit/test_registry.cpp: the case registry and case metadata.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/case.hpp>
#include <dlpack_validate/subject.hpp>

#include "idle_subject.hpp"

#include <set>

using namespace dlpv;

TEST_CASE("every case file registered (no unit dropped by the linker)") {
  CHECK(Registry::instance().unit_count() == DLPV_CASE_UNITS);
}

TEST_CASE("case ids are unique, sorted and dotted") {
  const auto& all = Registry::instance().cases();
  REQUIRE(all.size() >= 15);
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].id < all[i].id);
  for (const auto& c : all) {
    CHECK(c.id.find('.') != std::string::npos);
    CHECK(c.id.find(' ') == std::string::npos);
  }
}

TEST_CASE("case metadata: requirements exist, title, body, known needs") {
  std::set<std::string> caps(std::begin(kCapabilities), std::end(kCapabilities));
  for (const auto& c : Registry::instance().cases()) {
    INFO(c.id);
    CHECK(!c.title.empty());
    CHECK(static_cast<bool>(c.body));
    REQUIRE(!c.requirements.empty());
    for (const auto& r : c.requirements) CHECK_MESSAGE(find_requirement(r) != nullptr, r);
    for (const auto& n : c.needs) CHECK_MESSAGE(caps.count(n) == 1, n);
  }
}

TEST_CASE("requirement table and areas") {
  CHECK(all_requirements().size() > 100);
  CHECK(area_of("DEL-02") == "deleter");
  CHECK(area_of("XAPI-04") == "exchange_api");
  CHECK(area_of("FLAG-01") == "version_flags");
  CHECK(area_of("KW-01") == "protocol");
}

TEST_CASE("glob selection") {
  CHECK(glob_match("consumer.*", "consumer.byte_offset.legacy"));
  CHECK(!glob_match("consumer.*", "producer.tensor.int64.fortran.legacy"));
  CHECK(glob_match("*.legacy", "consumer.byte_offset.legacy"));
}

TEST_CASE("worst status wins inside a case; no observation is an error") {
  CaseInfo info;
  info.id = "t.x";
  info.severity = Severity::should;
  IdleSubject subject;
  {
    CaseContext ctx(info, subject);
    CHECK(ctx.finish(nullptr, nullptr).status == Status::error);
  }
  {
    CaseContext ctx(info, subject);
    ctx.check(true, "DEL-02", "ok");
    ctx.check(false, "DEL-04", "should-level");
    CHECK(ctx.finish(nullptr, nullptr).status == Status::warn);
  }
  {
    CaseContext ctx(info, subject);
    ctx.check_as(Severity::must, false, "DEL-02", "must-level");
    std::string skip = "later skip";
    auto out = ctx.finish(&skip, nullptr);
    CHECK(out.status == Status::fail);  // a failure before a skip is still a failure
    CHECK(out.message.find("DEL-02") != std::string::npos);
  }
  {
    CaseContext ctx(info, subject);
    std::string skip = "no CUDA device";
    auto out = ctx.finish(&skip, nullptr);
    CHECK(out.status == Status::skip);
    CHECK(out.message == "no CUDA device");
  }
}
