// cases/producer/tensor.cpp: producer.tensor.*: a producer's 3x4 tensor is well-formed and holds
// the right data, per dtype, layout and struct kind (LAYOUT-01/04/05/07, DTYPE-01/02/03/05/07/
// 10/11/13, DEV-02/03, VER-02, FLAG-05).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void declare(const char* dtype, uint32_t layout, StructKind k) {
  const DLDataType t = *dtype_from_name(dtype);
  const bool versioned = k == StructKind::versioned;
  Declare(fmt::format("producer.tensor.{}.{}.{}", dtype, layout_name(layout), to_string(k)),
          fmt::format("{} {} export of a 3x4 {} array is well-formed and holds the pattern", to_string(k),
                      layout_name(layout), dtype))
      .must(export_requirements(t, "3x4", layout, versioned)).role(Role::producer)
      .kind(k).dtype(t).layout(layout).device(kCpu0).shape("3x4")
      .needs({export_need(k)})
      .proven_by({"lanes_zero", "device_id_hardcoded"})
      .run(export_inspect_release);  // support/helpers.cpp
}

DLPV_CASES {
  const char* all_dtypes[] = {
      "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
      "float32", "float64", "bfloat16", "complex64", "complex128", "bool", "float8_e3m4",
      "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
      "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
      // Provisional (DLPack main after 1.3): a 1.3 library refuses it (a skip); one that knows it
      // is judged by DTYPE-01's rule for values newer than the validator's version.
      "bcomplex32"};
  const uint32_t layouts[] = {DLPV_LAYOUT_FORTRAN, DLPV_LAYOUT_STRIDED, DLPV_LAYOUT_OFFSET, DLPV_LAYOUT_REVERSED,
                              DLPV_LAYOUT_BROADCAST};
  for (StructKind k : kBothKinds) {
    for (const char* d : all_dtypes) declare(d, DLPV_LAYOUT_CONTIGUOUS, k);
    for (uint32_t l : layouts) {
      declare("float32", l, k);
      declare("int64", l, k);
    }
    for (const char* d : {"float16", "complex128", "bool", "uint8"})
      for (uint32_t l : {DLPV_LAYOUT_FORTRAN, DLPV_LAYOUT_REVERSED}) declare(d, l, k);
  }
}

}  // namespace
}  // namespace dlpv::cases
