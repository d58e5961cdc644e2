// cases/producer/shape.cpp: producer.shape.*: float32 exports of the catalogue's edge shapes
// (0-d, empty, size-1 axes, 32 dimensions) are well-formed and hold the right data
// (LAYOUT-01/04/05/07/10, DTYPE-01/02/03, DEV-02/03, VER-02).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  Declare("producer.shape", "{kind} contiguous export of a {shape} float32 array is well-formed and holds the pattern")
      .role(Role::producer).dtype("float32").layout(DLPV_LAYOUT_CONTIGUOUS).device(kCpu0)
      .combine("shape", {"scalar", "empty", "ones", "ndim32"})
      .per_kind(kBothKinds)
      .each(declare_export_requirements)  // support/helpers.cpp
      .proven_by({"garbage_shape_null", "export_segfault"})  // only size-1 axes show a shape bug
      .run(export_inspect_release);  // support/helpers.cpp
}

}  // namespace
}  // namespace dlpv::cases
