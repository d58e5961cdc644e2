// cases/consumer/layout.cpp: consumer.layout.*: strided, Fortran, reversed and broadcast
// tensors are read right or refused cleanly, never misread (LAYOUT-01, LAYOUT-11).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  // dtype_layout_roundtrip (support/consumer_flow.cpp) is the body.
  // Any strides are a MUST (LAYOUT-01); negative and zero strides a SHOULD (LAYOUT-11).
  Declare("consumer.layout", "{kind} import of a {layout} float32 tensor reads back right; deleter once, after release")
      .role(Role::consumer).device(kCpu0)
      .combine("dtype", {"float32"})
      .combine("layout", {"fortran", "strided", "reversed", "broadcast"}, [](Declare& d, const std::string& l) {
        if (l == "fortran" || l == "strided") d.must({"LAYOUT-01", "DEL-02"});
        else d.should({"LAYOUT-11", "DEL-02"});
      })
      .per_kind(kBothKinds)
      .needs({need::read_array, need::release_array})
      .proven_by({"ignore_strides"})
      .run(dtype_layout_roundtrip);
}

}  // namespace
}  // namespace dlpv::cases
