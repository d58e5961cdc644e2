// cases/producer/tensor.cpp: producer.tensor.*: a producer's 3x4 tensor is well-formed and holds
// the right data, per dtype, layout and struct kind (LAYOUT-01/04/05/07, DTYPE-01/02/03/05/07/
// 10/11/13, DEV-02/03, VER-02, FLAG-05, and FLAG-01 on a versioned export's flags).
// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "support/helpers.hpp"

namespace dlpv::cases {
namespace {

void declare(std::vector<std::string> dtypes, std::vector<std::string> layouts) {
  Declare("producer.tensor", "{kind} {layout} export of a 3x4 {dtype} array is well-formed and holds the pattern")
      .role(Role::producer).device(kCpu0).shape("3x4")
      .combine("dtype", std::move(dtypes))
      .combine("layout", std::move(layouts))
      .per_kind(kBothKinds)
      .each(declare_export_requirements)  // support/helpers.cpp
      .proven_by({"lanes_zero", "device_id_hardcoded"})
      .run(export_inspect_release);  // support/helpers.cpp
}

DLPV_CASES {
  declare({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64",
           "bfloat16", "complex64", "complex128", "bool", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
           "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn",
           "float6_e3m2fn", "float4_e2m1fn",
           // Provisional (DLPack main after 1.3): a 1.3 library refuses it (a skip); one that
           // knows it is judged by DTYPE-01's rule for values newer than the validator's version.
           "bcomplex32"},
          {"contiguous"});
  declare({"float32", "int64"}, {"fortran", "strided", "offset", "reversed", "broadcast"});
  declare({"float16", "complex128", "bool", "uint8"}, {"fortran", "reversed"});
}

}  // namespace
}  // namespace dlpv::cases
