// cases/producer/large.cpp: producer.large.*: the export rules of producer.tensor.* (LAYOUT-01/
// 04/05/07, DTYPE-01/02/03, DEV-02/03, VER-02, FLAG-05) on a large tensor (float32 1024x1024,
// 1 Mi elements, 4 MiB), every element read back: a producer may take another path for large
// arrays (a bulk fill, a threaded copy) that the 3x4 cases never reach.
// SPDX-License-Identifier: Apache-2.0
#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

DLPV_CASES {
  Declare("producer.large", "{kind} {layout} export of a large (1 Mi elements) float32 array holds every value")
      .role(Role::producer).dtype("float32").shape("large").device(kCpu0)
      .combine("layout", {"contiguous", "strided", "offset"})
      .per_kind(kBothKinds)
      .each(declare_export_requirements)  // support/helpers.cpp
      .proven_by({"large_fill_compact", "strides_in_bytes"})  // the first reaches only strided layouts
      .run(export_inspect_release);  // support/helpers.cpp
}

}  // namespace
}  // namespace dlpv::cases
