// tests/unit/test_inspector.cpp: the inspector finds what is wrong without crashing.
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/tensor.hpp>

using namespace dlpv;

namespace {
bool any_failed(const std::vector<Finding>& f, const std::string& req) {
  for (const auto& x : f)
    if (!x.ok && x.requirement == req) return true;
  return false;
}
bool all_ok(const std::vector<Finding>& f) {
  for (const auto& x : f)
    if (!x.ok) return false;
  return true;
}
}  // namespace

TEST_CASE("a made tensor inspects clean in every layout") {
  for (uint32_t layout = 0; layout < 6; ++layout) {
    MadeSpec spec;
    spec.layout = layout;
    auto m = MadeTensor::make(spec, true);
    TensorExpectation want;
    want.shape = spec.shape;
    want.layout = layout;
    InspectOptions opt{true, {1, 3}, true};
    std::vector<Finding> f;
    inspect_tensor(m->versioned()->dl_tensor, want, opt, f);
    CHECK_MESSAGE(all_ok(f), layout_name(layout));
  }
}

TEST_CASE("byte strides, wrong shape, NULL strides at 1.3, garbage data") {
  MadeSpec spec;
  spec.layout = DLPV_LAYOUT_FORTRAN;
  auto m = MadeTensor::make(spec, true);
  DLTensor t = m->versioned()->dl_tensor;
  TensorExpectation want;
  want.shape = spec.shape;
  want.layout = DLPV_LAYOUT_FORTRAN;
  InspectOptions opt{true, {1, 3}, true};

  int64_t bytes[2] = {4, 12};
  DLTensor b = t;
  b.strides = bytes;
  std::vector<Finding> f;
  inspect_tensor(b, want, opt, f);
  CHECK(any_failed(f, "LAYOUT-04"));

  DLTensor ns = t;
  ns.strides = nullptr;
  f.clear();
  inspect_tensor(ns, want, opt, f);
  CHECK(any_failed(f, "LAYOUT-02"));

  DLTensor g = t;
  g.data = guard_address();
  f.clear();
  inspect_tensor(g, want, opt, f);  // must not crash
  CHECK(any_failed(f, "LAYOUT-07"));

  int64_t huge[2] = {int64_t{1} << 62, int64_t{1} << 62};
  DLTensor h = t;
  h.strides = huge;
  std::vector<uint8_t> out;
  std::string why;
  CHECK_FALSE(gather_elements(h, out, why));
  CHECK(!why.empty());

  DLTensor bad_shape = t;
  bad_shape.shape = static_cast<int64_t*>(guard_address());
  f.clear();
  inspect_tensor(bad_shape, want, opt, f);
  CHECK(any_failed(f, "LAYOUT-05"));
}

TEST_CASE("made tensor deleter counts and poisons") {
  MadeSpec spec;
  auto m = MadeTensor::make(spec, false);
  DLManagedTensor* t = m->legacy();
  t->deleter(t);
  CHECK(m->deleter_calls() == 1);
  CHECK(t->dl_tensor.data == guard_address());
  t->deleter(t);  // poisoned: counted, harmless
  CHECK(m->deleter_calls() == 2);
}

TEST_CASE("safe_read refuses bad addresses") {
  char buf[8];
  CHECK_FALSE(safe_read(guard_address(), buf, 8));
  CHECK_FALSE(safe_read(nullptr, buf, 8));
  const char src[8] = "abcdefg";
  CHECK(safe_read(src, buf, 8));
}
