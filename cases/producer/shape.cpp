// cases/producer/shape.cpp: producer.shape.*: float32 exports of the catalogue's edge shapes
// (0-d, empty, size-1 axes, 32 dimensions) are well-formed and hold the right data
// (LAYOUT-01/04/05/07/10, DTYPE-01/02/03, DEV-02/03, VER-02).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  const DLDataType f32{kDLFloat, 32, 1};
  for (StructKind k : kBothKinds)
    for (const char* s : {"scalar", "empty", "ones", "ndim32"})
      Declare(fmt::format("producer.shape.{}.{}", s, to_string(k)),
              fmt::format("{} contiguous export of a {} float32 array is well-formed and holds the pattern",
                          to_string(k), s))
          .must(export_requirements(f32, s, DLPV_LAYOUT_CONTIGUOUS, k == StructKind::versioned))
          .role(Role::producer).kind(k).dtype(f32).layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0).shape(s)
          .needs({export_need(k)})
          .proven_by({"garbage_shape_null", "export_segfault"})  // only size-1 axes show a shape bug
          .run(export_inspect_release);  // support/helpers.cpp
}

}  // namespace
}  // namespace dlpv::cases
