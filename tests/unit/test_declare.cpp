// tests/unit/test_declare.cpp: the case declaration builder (declare.hpp): typed parameters and
// their record text, per-kind and per-sample families, the typed reads a body makes.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/declare.hpp>
#include <dlpack_validate/subject.hpp>
#include <dlpack_validate/tensor.hpp>

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
  CHECK(scalar->title == "a rule (float32 ())");  // a 0-d shape, not "NULL"
  // about_data: the empty sample (no element to read) is left out.
  const auto d = Declare("t.data", "t").must({"DEL-05"}).per_sample(true).records(nothing);
  CHECK(by_id(d, "t.data.empty") == nullptr);
  CHECK(by_id(d, "t.data.uint8") != nullptr);
}

TEST_CASE("shapes and articles in titles and messages") {
  CHECK(shape_text(std::vector<int64_t>{}) == "()");
  CHECK(shape_text(std::vector<int64_t>{4}) == "(4,)");
  CHECK(shape_text(std::vector<int64_t>{2, 3}) == "(2, 3)");
  // A tensor's own pointer: NULL is lawful for ndim 0 only, and said so.
  CHECK(shape_text(nullptr, 0) == "() (shape pointer NULL, allowed for ndim 0)");
  CHECK(shape_text(nullptr, 2) == "NULL");
  const int64_t dims[] = {3, 4};
  CHECK(shape_text(dims, 2) == "(3, 4)");
  CHECK(with_article("offset tensor") == "an offset tensor");
  CHECK(with_article("int16 array") == "an int16 array");
  CHECK(with_article("empty array") == "an empty array");
  CHECK(with_article("ext_dev:0 array") == "an ext_dev:0 array");
  CHECK(with_article("8-bit code") == "an 8-bit code");
  CHECK(with_article("uint8 array") == "a uint8 array");
  CHECK(with_article("ones array") == "a ones array");
  CHECK(with_article("oneapi:0 array") == "a oneapi:0 array");
  CHECK(with_article("float32 tensor") == "a float32 tensor");
  CHECK(with_article("3x4 array") == "a 3x4 array");
  // A title's "a {param}" takes the article its value wants.
  const auto v = Declare("t.art", "import of a {where} tensor").must({"DEL-01"}).combine("where", {"offset", "plain"})
                     .records(nothing);
  REQUIRE(v.size() == 2);
  for (const CaseInfo& c : v)
    CHECK(c.title == (c.params.at("where") == "offset" ? "import of an offset tensor" : "import of a plain tensor"));
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

TEST_CASE("pairwise and triples: every pair of values meets, and every triple of the named axes") {
  auto declare = [] {
    return Declare("t.cover", "title").must({"KW-03"})
        .combine("a", {"a0", "a1", "a2", "a3", "a4"}).combine("b", {"b0", "b1", "b2"})
        .combine("c", {"c0", "c1", "c2", "c3"}).combine("d", {"d0", "d1", "d2", "d3", "d4"})
        .combine("e", {"e0", "e1"});
  };
  const auto pairs = declare().pairwise().records(nothing);
  const auto triples = declare().triples({"a", "b", "c", "d"}).records(nothing);
  auto value = [](const CaseInfo& c, const char* axis) { return c.params.at(axis); };
  auto has = [&](const std::vector<CaseInfo>& v, std::vector<std::pair<const char*, std::string>> want) {
    return std::any_of(v.begin(), v.end(), [&](const CaseInfo& c) {
      return std::all_of(want.begin(), want.end(), [&](const auto& w) { return value(c, w.first) == w.second; });
    });
  };
  const std::vector<std::pair<const char*, int>> axes{{"a", 5}, {"b", 3}, {"c", 4}, {"d", 5}, {"e", 2}};
  auto name = [](const char* axis, int i) { return std::string(axis) + std::to_string(i); };
  for (size_t x = 0; x < axes.size(); ++x)
    for (size_t y = x + 1; y < axes.size(); ++y)
      for (int i = 0; i < axes[x].second; ++i)
        for (int j = 0; j < axes[y].second; ++j) {
          CHECK(has(pairs, {{axes[x].first, name(axes[x].first, i)}, {axes[y].first, name(axes[y].first, j)}}));
          CHECK(has(triples, {{axes[x].first, name(axes[x].first, i)}, {axes[y].first, name(axes[y].first, j)}}));
        }
  int missing = 0;  // triples of a, b, c, d: the pairwise cover misses some; the triple cover none
  for (size_t x = 0; x < 4; ++x)
    for (size_t y = x + 1; y < 4; ++y)
      for (size_t z = y + 1; z < 4; ++z)
        for (int i = 0; i < axes[x].second; ++i)
          for (int j = 0; j < axes[y].second; ++j)
            for (int k = 0; k < axes[z].second; ++k) {
              const std::vector<std::pair<const char*, std::string>> t{{axes[x].first, name(axes[x].first, i)},
                                                                       {axes[y].first, name(axes[y].first, j)},
                                                                       {axes[z].first, name(axes[z].first, k)}};
              CHECK(has(triples, t));
              missing += has(pairs, t) ? 0 : 1;
            }
  CHECK(missing > 0);
  CHECK(pairs.size() < 40);
  CHECK(triples.size() == 100);  // a x c x d: no cover of every triple can be smaller
  CHECK(declare().triples({"a", "b", "c", "d"}).records(nothing).front().id == triples.front().id);  // stable
}

TEST_CASE("cover::greedy (lazy) takes exactly the points of the plain full scan") {
  // The spaces the suite declares (consumer.input, producer.input, python.request's triples) and
  // pseudo-random ones: the same points, in the same order.
  std::vector<std::pair<std::vector<size_t>, std::vector<size_t>>> spaces{  // sizes, the triple axes
      {{10, 6, 5, 5, 3, 2, 2}, {}},
      {{10, 6, 7, 4, 3, 2, 2, 4}, {}},
      {{5, 3, 4, 5, 2}, {0, 1, 2, 3}},
      {{3, 3, 3, 3, 3, 3}, {1, 2, 4, 5}},
  };
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int r = 0; r < 24; ++r) {
    std::vector<size_t> sizes(3 + next() % 4);
    for (size_t& v : sizes) v = 1 + next() % 5;
    std::vector<size_t> strong;
    for (size_t a = 0; a < sizes.size(); ++a)
      if (next() % 2) strong.push_back(a);
    spaces.emplace_back(sizes, strong);
  }
  for (const auto& [sizes, strong] : spaces) {
    std::vector<std::vector<size_t>> groups;
    for (size_t a = 0; a < sizes.size(); ++a)
      for (size_t b = a + 1; b < sizes.size(); ++b) groups.push_back({a, b});
    for (size_t i = 0; i < strong.size(); ++i)
      for (size_t j = i + 1; j < strong.size(); ++j)
        for (size_t k = j + 1; k < strong.size(); ++k) groups.push_back({strong[i], strong[j], strong[k]});
    CHECK(cover::greedy(sizes, groups) == cover::greedy_plain(sizes, groups));
  }
}

TEST_CASE("covers are computed once: the memo a worker is handed gives the same covers, and junk adds none") {
  const std::vector<size_t> sizes{4, 3, 5, 2};
  std::vector<std::vector<size_t>> groups;
  for (size_t a = 0; a < sizes.size(); ++a)
    for (size_t b = a + 1; b < sizes.size(); ++b) groups.push_back({a, b});
  const auto cover = cover::greedy(sizes, groups);
  CHECK(cover == cover::greedy_plain(sizes, groups));
  const std::string text = cover::memo_text();
  CHECK(text.rfind("dlpack-validate covers 1\n", 0) == 0);
  CHECK(text.find("4,3,5,2|0-1,0-2,0-3,1-2,1-3,2-3\t") != std::string::npos);
  CHECK(cover::memo_load(text) == 0);  // every cover is already kept
  // A space nobody computed yet, handed in: greedy returns what it was handed, not a new search
  // (this is how a worker skips the search; the handed points here are deliberately not a cover).
  CHECK(cover::memo_load("dlpack-validate covers 1\n7,7|0-1\t1.2;3.4\n") == 1);
  CHECK(cover::greedy({7, 7}, {{0, 1}}) == std::vector<std::vector<size_t>>{{1, 2}, {3, 4}});
  // Junk is left out: another header, a point outside its space, a short point, no points.
  CHECK(cover::memo_load("another header\n8,8|0-1\t1.2\n") == 0);
  CHECK(cover::memo_load("dlpack-validate covers 1\n8,8|0-1\t1.9\n") == 0);
  CHECK(cover::memo_load("dlpack-validate covers 1\n8,8|0-1\t1\n8,9|0-1\t\n8,10|0-1\t1.x\n") == 0);
  CHECK(cover::greedy({8, 8}, {{0, 1}}) == cover::greedy_plain({8, 8}, {{0, 1}}));
}

TEST_CASE("a covered family's other points are made by id, the id its values give") {
  Declare("t.family", "title {a} {b} {c}").must({"LAYOUT-01"})
      .combine("a", {"x", "y", "z"}).combine("b", {"p", "q"}).combine("c", {"u", "v", "w"})
      .pairwise().run(nothing);
  Registry& reg = Registry::instance();
  std::vector<size_t> pick;
  const Family* f = reg.family_of("t.family.z.q.w", &pick);
  REQUIRE(f != nullptr);
  CHECK(pick == std::vector<size_t>{2, 1, 2});
  CHECK(f->id_of(pick) == "t.family.z.q.w");
  CHECK(reg.family_of("t.family.z.q") == nullptr);
  CHECK(reg.family_of("t.family.z.q.w.extra") == nullptr);
  CHECK(reg.family_of("t.family.z.r.w") == nullptr);
  size_t covered = 0;
  for (const CaseInfo& c : reg.cases()) covered += c.id.rfind("t.family.", 0) == 0 ? 1 : 0;
  CHECK(covered < 18);  // the cover, not all 18 points
  for (const char* id : {"t.family.x.p.u", "t.family.z.q.w", "t.family.y.p.w"}) {
    const CaseInfo* c = reg.find(id);
    REQUIRE(c != nullptr);
    CHECK(c->id == id);
    CHECK(c->title.find("{") == std::string::npos);
    CHECK(reg.find(id) == c);  // made once, kept
  }
  CHECK(reg.find("t.family.q.q.q") == nullptr);
}

TEST_CASE("extend: the cover of the first axes stays as it was, and the new values meet every other value") {
  auto declare = [] {
    return Declare("t.ext", "title {a}").must({"LAYOUT-01"})
        .combine("a", {"a0", "a1", "a2", "a3"}).combine("b", {"b0", "b1", "b2"}).combine("c", {"c0", "c1"})
        .pairwise();
  };
  const auto before = declare().records(nothing);
  const auto after = declare().extend("v", {"edge", "huge"}).records(nothing);
  std::vector<std::string> ids;
  for (const CaseInfo& c : after) ids.push_back(c.id);
  for (const CaseInfo& c : before) {  // every case before is there, with its id and title
    const auto it = std::find(ids.begin(), ids.end(), c.id);
    REQUIRE(it != ids.end());
    const CaseInfo& same = after[static_cast<size_t>(it - ids.begin())];
    CHECK(same.params.count("v") == 0);
    CHECK(same.title == c.title);
  }
  size_t added = 0;
  for (const CaseInfo& c : after) {
    if (!c.params.count("v")) continue;
    const std::string& v = c.params.at("v");
    ++added;
    CHECK(c.id.size() > v.size());
    CHECK(c.id.compare(c.id.size() - v.size() - 1, std::string::npos, "." + v) == 0);
    CHECK(c.title.find("(" + v + " v)") != std::string::npos);
  }
  CHECK(after.size() == before.size() + added);
  for (const char* v : {"edge", "huge"})
    for (const auto& [axis, n] : std::vector<std::pair<std::string, int>>{{"a", 4}, {"b", 3}, {"c", 2}})
      for (int i = 0; i < n; ++i)
        CHECK(std::any_of(after.begin(), after.end(), [&](const CaseInfo& c) {
          return c.params.count("v") && c.params.at("v") == v && c.params.at(axis) == axis + std::to_string(i);
        }));
  CHECK(added == 8);  // 4 values of a, for each of the two new values
  // Any point is made by id: with the extension's value, or without it (its implicit first).
  declare().extend("v", {"edge"}).run(nothing);
  std::vector<size_t> pick;
  const Family* f = Registry::instance().family_of("t.ext.a3.b1.c0.edge", &pick);
  REQUIRE(f != nullptr);
  CHECK(pick == std::vector<size_t>{3, 1, 0, 1});
  CHECK(f->id_of(pick) == "t.ext.a3.b1.c0.edge");
  REQUIRE(Registry::instance().family_of("t.ext.a3.b1.c0", &pick) == f);
  CHECK(pick == std::vector<size_t>{3, 1, 0, 0});
  CHECK(f->id_of(pick) == "t.ext.a3.b1.c0");
  CHECK(Registry::instance().family_of("t.ext.a3.b1.c0.huge") == nullptr);
  CHECK(Registry::instance().family_of("t.ext.a3.b1.c0.edge.edge") == nullptr);
  CHECK(Registry::instance().family_of("t.ext.a3.b1") == nullptr);
}

TEST_CASE("widen: the cover keeps its cases, and each new value of an axis meets every value of the others") {
  auto declare = [] {
    return Declare("t.wide", "title {a} {b}").must({"LAYOUT-01"})
        .combine("a", {"a0", "a1", "a2", "a3"}).combine("b", {"b0", "b1", "b2"}).combine("c", {"c0", "c1"})
        .pairwise();
  };
  const auto before = declare().records(nothing);
  const auto after = declare().widen("b", {"b3", "b4"}).extend("v", {"edge"}).records(nothing);
  const auto extended = declare().extend("v", {"edge"}).records(nothing);
  std::vector<std::string> ids;
  for (const CaseInfo& c : after) ids.push_back(c.id);
  for (const auto* set : {&before, &extended})  // every case before either is there, as it was
    for (const CaseInfo& c : *set) {
      const auto it = std::find(ids.begin(), ids.end(), c.id);
      REQUIRE(it != ids.end());
      CHECK(after[static_cast<size_t>(it - ids.begin())].title == c.title);
    }
  size_t added = 0;
  for (const CaseInfo& c : after) {
    const std::string& b = c.params.at("b");
    if (b != "b3" && b != "b4") continue;
    ++added;
    CHECK(c.params.count("v") == 0);  // a new value's twins keep the extension's implicit value
    CHECK(c.id.find("." + b + ".") != std::string::npos);
    CHECK(c.title.find(b) != std::string::npos);
  }
  CHECK(after.size() == extended.size() + added);
  for (const char* b : {"b3", "b4"})
    for (const auto& [axis, n] : std::vector<std::pair<std::string, int>>{{"a", 4}, {"c", 2}})
      for (int i = 0; i < n; ++i)
        CHECK(std::any_of(after.begin(), after.end(), [&](const CaseInfo& c) {
          return c.params.at("b") == b && c.params.at(axis) == axis + std::to_string(i);
        }));
  CHECK(added == 8);  // 4 values of a, for each of the two new values
  // Any point is made by id, a new value's included.
  declare().widen("b", {"b3"}).run(nothing);
  std::vector<size_t> pick;
  const Family* f = Registry::instance().family_of("t.wide.a2.b3.c1", &pick);
  REQUIRE(f != nullptr);
  CHECK(pick == std::vector<size_t>{2, 3, 1});
  CHECK(f->id_of(pick) == "t.wide.a2.b3.c1");
}

TEST_CASE("find() before cases() makes only the declarations an id extends, and the same records") {
  Registry& reg = Registry::instance();
  Declare("t.lazy", "lazy {a}").must({"LAYOUT-01"}).combine("a", {"x", "y"}).run(nothing);
  Declare("t.lazyish", "not a prefix of t.lazy.*").must({"LAYOUT-01"}).run(nothing);
  // Before the registry lists its cases: t.lazy's records are made, t.lazyish's are not needed.
  const CaseInfo* y = reg.find("t.lazy.y");
  REQUIRE(y != nullptr);
  CHECK(y->id == "t.lazy.y");
  CHECK(y->title == "lazy y");
  CHECK(reg.find("t.lazy.z") == nullptr);  // no such point: the whole registry was searched
  const CaseInfo* other = reg.find("t.lazyish");
  REQUIRE(other != nullptr);
  // The list holds the same record, once; the pointer find() gave stays valid.
  size_t listed = 0;
  for (const CaseInfo& c : reg.cases())
    if (c.id == "t.lazy.y") {
      ++listed;
      CHECK(c.title == y->title);
      CHECK(c.requirements == y->requirements);
      CHECK(c.params == y->params);
    }
  CHECK(listed == 1);
  CHECK(y->id == "t.lazy.y");
}
