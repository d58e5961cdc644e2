// tests/unit/test_pattern.cpp: the reference data pattern of plugin.h (exact encodings).
// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>
#include <dlpack_validate/plugin.h>
#include <dlpack_validate/tensor.hpp>

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

TEST_CASE("the edge pattern: each dtype's extremes and special values, by their bits") {
  const DLDataType f32{kDLFloat, 32, 1}, f64{kDLFloat, 64, 1}, f16{kDLFloat, 16, 1}, bf16{kDLBfloat, 16, 1},
      i16{kDLInt, 16, 1}, u8{kDLUInt, 8, 1}, c64{kDLComplex, 64, 1}, b8{6, 8, 1}, fp8{DLPV_CODE_FLOAT8_E4M3FN, 8, 1};
  std::vector<uint32_t> w(11);
  dlpv_pattern_fill_values(f32, 11, w.data(), DLPV_VALUES_EDGE);
  CHECK(w == std::vector<uint32_t>{0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x80000000u, 0x7F7FFFFFu,
                                   0x00800000u, 0x00000001u, 0x807FFFFFu, 0x3F800001u, 0u});
  std::vector<uint64_t> d(4);
  dlpv_pattern_fill_values(f64, 4, d.data(), DLPV_VALUES_EDGE);
  CHECK(d == std::vector<uint64_t>{0xFFEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                   0x7FF8000000000000ull});
  std::vector<uint16_t> h(4);
  dlpv_pattern_fill_values(f16, 4, h.data(), DLPV_VALUES_EDGE);
  CHECK(h == std::vector<uint16_t>{0xFBFFu, 0x7C00u, 0xFC00u, 0x7E00u});
  dlpv_pattern_fill_values(bf16, 4, h.data(), DLPV_VALUES_EDGE);
  CHECK(h == std::vector<uint16_t>{0xFF7Fu, 0x7F80u, 0xFF80u, 0x7FC0u});
  std::vector<int16_t> s(11);
  dlpv_pattern_fill_values(i16, 11, s.data(), DLPV_VALUES_EDGE);
  CHECK(s == std::vector<int16_t>{-1, -32768, 32767, 0, 1, -32767, 0x5555, -21846, -256, 255, -2});
  std::vector<uint8_t> u(11);
  dlpv_pattern_fill_values(u8, 11, u.data(), DLPV_VALUES_EDGE);
  CHECK(u == std::vector<uint8_t>{255, 128, 127, 0, 1, 129, 0x55, 0xAA, 0xF0, 0x0F, 254});
  std::vector<uint32_t> c(4);  // element 0: real part entry 0, imaginary part entry 5
  dlpv_pattern_fill_values(c64, 2, c.data(), DLPV_VALUES_EDGE);
  CHECK(c == std::vector<uint32_t>{0xFF7FFFFFu, 0x7F7FFFFFu, 0x7F800000u, 0x00800000u});
  std::vector<uint8_t> b(12);
  dlpv_pattern_fill_values(b8, 12, b.data(), DLPV_VALUES_EDGE);
  CHECK(b == std::vector<uint8_t>{1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1});  // a DLPack bool holds 0 or 1
  std::vector<uint8_t> e(5), p(5);  // no edge table: the small numbers
  dlpv_pattern_fill_values(fp8, 5, e.data(), DLPV_VALUES_EDGE);
  dlpv_pattern_fill(fp8, 5, p.data());
  CHECK(e == p);
  CHECK(dlpv_pattern_has_edge(f32));
  CHECK_FALSE(dlpv_pattern_has_edge(fp8));
}

TEST_CASE("pattern_fill (one period, copied on) writes what the element-wise fill writes") {
  // Every code plugin.h knows, at every byte width, both value sets, at lengths around the
  // doubling's edges: a period that is wrong for any of them shows as a differing byte.
  for (uint8_t code = 0; code <= DLPV_CODE_BCOMPLEX; ++code)
    for (uint8_t bits : {8, 16, 32, 64, 128})
      for (int values : {DLPV_VALUES_PLAIN, DLPV_VALUES_EDGE}) {
        // 128 bits is a complex width only (plugin.h stores one part in at most 64 bits).
        if (bits == 128 && code != DLPV_CODE_COMPLEX && code != DLPV_CODE_BCOMPLEX) continue;
        const DLDataType t{code, bits, 1};
        const int64_t p = dlpv::pattern_period(t, values);
        for (int64_t n : {int64_t{0}, int64_t{1}, 2 * p, 2 * p + 1, 3 * p + 5, int64_t{4099}, int64_t{70001}}) {
          std::vector<unsigned char> want(dlpv_pattern_nbytes(t, n) + 1, 0xA5), got(want);
          CHECK(dlpv::pattern_fill(t, n, got.data(), values) == dlpv_pattern_fill_values(t, n, want.data(), values));
          CAPTURE(int(code));
          CAPTURE(int(bits));
          CAPTURE(values);
          CAPTURE(n);
          CHECK(got == want);
        }
      }
  // A sub-byte dtype has no period here and is filled element by element.
  CHECK(dlpv::pattern_period(DLDataType{DLPV_CODE_FLOAT4_E2M1FN, 4, 1}, DLPV_VALUES_PLAIN) == 0);
}
