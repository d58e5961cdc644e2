// cases/consumer/layout.cpp: consumer.layout.*: strided, Fortran, reversed and broadcast
// tensors are read right or refused cleanly, never misread (LAYOUT-01, LAYOUT-11).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/consumer_flow.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  // dtype_layout_roundtrip (support/consumer_flow.cpp) is the body.
  const struct { uint32_t layout; const char* req; Severity severity; } layouts[] = {
      {DLPV_LAYOUT_FORTRAN, "LAYOUT-01", Severity::must}, {DLPV_LAYOUT_STRIDED, "LAYOUT-01", Severity::must},
      {DLPV_LAYOUT_REVERSED, "LAYOUT-11", Severity::should}, {DLPV_LAYOUT_BROADCAST, "LAYOUT-11", Severity::should}};
  for (StructKind k : kBothKinds)
    for (const auto& l : layouts) {
      Declare(fmt::format("consumer.layout.float32.{}.{}", layout_name(l.layout), to_string(k)),
              fmt::format("{} import of a {} float32 tensor reads back right; deleter once, after release",
                          to_string(k), layout_name(l.layout)))
          .level(l.severity, {l.req, "DEL-02"}).role(Role::consumer).kind(k).dtype("float32").layout(l.layout).device(kCpu0)
          .needs({import_need(k), "read_array", "release_array"})
          .proven_by({"ignore_strides"})
          .run(dtype_layout_roundtrip);
    }
}

}  // namespace
}  // namespace dlpv::cases
