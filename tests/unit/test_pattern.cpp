// tests/unit/test_pattern.cpp: the reference data pattern of plugin.h (exact encodings).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/plugin.h>

#include <cstring>
#include <vector>

TEST_CASE("small-float encodings match the formats' definitions") {
  CHECK(dlpv__encode_float(1.0, 5, 10, 15, 1) == 0x3C00u);   // float16
  CHECK(dlpv__encode_float(-7.5, 5, 10, 15, 1) == 0xC780u);
  CHECK(dlpv__encode_float(0.5, 5, 10, 15, 1) == 0x3800u);
  CHECK(dlpv__encode_float(1.0, 8, 7, 127, 1) == 0x3F80u);   // bfloat16
  CHECK(dlpv__encode_float(-2.0, 8, 7, 127, 1) == 0xC000u);
  CHECK(dlpv__encode_float(1.0, 4, 3, 7, 1) == 0x38u);       // e4m3fn
  CHECK(dlpv__encode_float(6.0, 4, 3, 7, 1) == 0x4Cu);
  CHECK(dlpv__encode_float(1.0, 5, 2, 15, 1) == 0x3Cu);      // e5m2
  CHECK(dlpv__encode_float(1.0, 8, 0, 127, 0) == 0x7Fu);     // e8m0fnu
  CHECK(dlpv__encode_float(0.5, 2, 1, 1, 1) == 0x1u);        // fp4 subnormal
  CHECK(dlpv__encode_float(6.0, 2, 1, 1, 1) == 0x7u);
  CHECK(dlpv__encode_float(-6.0, 2, 1, 1, 1) == 0xFu);
  CHECK(dlpv__encode_float(0.5, 2, 3, 1, 1) == 0x04u);       // e2m3fn subnormal
}

TEST_CASE("float32 and int64 patterns") {
  DLDataType f32{kDLFloat, 32, 1}, i64{kDLInt, 64, 1};
  std::vector<float> f(5);
  CHECK(dlpv_pattern_fill(f32, 5, f.data()) == 20);
  for (int i = 0; i < 5; ++i) CHECK(f[static_cast<size_t>(i)] == static_cast<float>(dlpv_pattern_value(f32, i)));
  std::vector<int64_t> v(3);
  dlpv_pattern_fill(i64, 3, v.data());
  CHECK(v[0] == -47);  // (7*0+3) mod 101 - 50
  CHECK(v[1] == -40);
}

TEST_CASE("complex parts are interleaved") {
  DLDataType c64{kDLComplex, 64, 1};
  float out[2];
  dlpv_pattern_store(c64, 3, out);
  CHECK(out[0] == static_cast<float>(dlpv_pattern_value(c64, 3)));
  CHECK(out[1] == static_cast<float>(dlpv_pattern_value_imag(c64, 3)));
}

TEST_CASE("sub-byte packing is little bit-endian") {
  DLDataType fp4{17, 4, 1};
  unsigned char b[2] = {0xFF, 0xFF};
  CHECK(dlpv_pattern_fill(fp4, 3, b) == 2);
  // elements 0,1,2 are 0.0, 1.0, -1.0 -> 0x0, 0x2, 0xA
  CHECK(b[0] == 0x20);
  CHECK(b[1] == 0x0A);
  DLDataType fp6{15, 6, 1};
  CHECK(dlpv_pattern_nbytes(fp6, 4) == 3);
}
