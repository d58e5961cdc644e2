// tests/unit/test_declare.cpp: the case declaration builder (declare.hpp): typed parameters and
// their record text, per-kind and per-sample families, the typed reads a body makes.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/subject.hpp>

#include "idle_subject.hpp"

#include <algorithm>

using namespace dlpv;

namespace {
void nothing(CaseContext&) {}
const CaseInfo* by_id(const std::vector<CaseInfo>& v, const std::string& id) {
  auto it = std::find_if(v.begin(), v.end(), [&](const CaseInfo& c) { return c.id == id; });
  return it == v.end() ? nullptr : &*it;
}
}  // namespace

TEST_CASE("a declaration renders its typed parameters as the record's text") {
  const auto v = Declare("t.one", "title")
                     .should({"FLAG-02", "DEL-02"}).role(Role::consumer)
                     .kind(StructKind::legacy).dtype("float8_e4m3fn").layout(DLPV_LAYOUT_FORTRAN)
                     .device(CaseDevice{{kDLCUDA, 1}, "cuda1"}).shape("ndim3").label("major", "2")
                     .needs({"read_array"}).proven_by({"some_mutant"})
                     .records(nothing);
  REQUIRE(v.size() == 1);
  const CaseInfo& c = v[0];
  CHECK(c.severity == Severity::should);
  CHECK(c.requirements == std::vector<std::string>{"FLAG-02", "DEL-02"});
  CHECK(c.params == std::map<std::string, std::string>{{"version", "legacy"}, {"dtype", "float8_e4m3fn"},
                                                       {"layout", "fortran"}, {"device", "cuda1"},
                                                       {"shape", "ndim3"}, {"major", "2"}});
  CHECK(c.values.device->device_type == kDLCUDA);
  CHECK(c.values.device->device_id == 1);
  CHECK(c.proofs == std::vector<std::string>{"some_mutant"});
  CHECK(c.source.find("cases/") == std::string::npos);  // declared here, in tests/unit
  CHECK(c.source.find("test_declare.cpp") != std::string::npos);
  // DLDevice without a label: shown as device_name() shows it.
  CHECK(Declare("t.two", "x").must({"DEV-02"}).device(DLDevice{kDLCPU, 0}).records(nothing)[0].params.at("device") ==
        "cpu:0");
}

TEST_CASE("per_kind: one case per struct kind, with its export or import need first") {
  const auto v = Declare("t.fam", "t").must({"DEL-02"}).role(Role::consumer).needs({"read_array"})
                     .per_kind(kBothKinds).records(nothing);
  REQUIRE(v.size() == 2);
  const CaseInfo* ver = by_id(v, "t.fam.versioned");
  const CaseInfo* leg = by_id(v, "t.fam.legacy");
  REQUIRE(ver);
  REQUIRE(leg);
  CHECK(ver->needs == std::vector<std::string>{"import_versioned", "read_array"});
  CHECK(leg->needs == std::vector<std::string>{"import_legacy", "read_array"});
  CHECK(leg->params.at("version") == "legacy");
  const auto p = Declare("t.p", "t").must({"DEL-01"}).per_kind({StructKind::versioned}).records(nothing);
  CHECK(p.at(0).needs == std::vector<std::string>{"export_versioned"});
}

TEST_CASE("per_sample: the bare rule on float32 3x4 plus one case per rule sample") {
  const auto v = Declare("t.rule", "a rule").must({"DEL-01"}).per_kind({StructKind::versioned}).per_sample()
                     .records(nothing);
  CHECK(v.size() == rule_samples().size() + 1);
  const CaseInfo* base = by_id(v, "t.rule.versioned");
  REQUIRE(base);
  CHECK(base->params.at("dtype") == "float32");
  CHECK(base->params.at("shape") == "3x4");
  CHECK(base->title == "a rule");
  const CaseInfo* scalar = by_id(v, "t.rule.scalar.versioned");
  REQUIRE(scalar);
  CHECK(scalar->values.shape == "scalar");
  CHECK(scalar->title == "a rule (float32 NULL)");  // shape_text of 0-d (as the records always said)
  // about_data: the empty sample (no element to read) is left out.
  const auto d = Declare("t.data", "t").must({"DEL-05"}).per_sample(true).records(nothing);
  CHECK(by_id(d, "t.data.empty") == nullptr);
  CHECK(by_id(d, "t.data.uint8") != nullptr);
}

TEST_CASE("a body reads what its case declares, and only that") {
  IdleSubject subject;
  const auto v = Declare("t.read", "t").must({"DEL-02"}).kind(StructKind::versioned).dtype("int64")
                     .layout(DLPV_LAYOUT_REVERSED).records(nothing);
  CaseContext ctx(v[0], subject);
  CHECK(ctx.versioned());
  CHECK(ctx.dtype().code == kDLInt);
  CHECK(ctx.dtype().bits == 64);
  CHECK(ctx.layout() == DLPV_LAYOUT_REVERSED);
  CHECK_THROWS_AS(ctx.device(), CaseHarnessError);  // not declared: the harness's mistake, an error
}
