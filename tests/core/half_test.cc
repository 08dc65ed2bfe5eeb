// 16-bit feature types: exact widening, round-to-nearest-even narrowing, the .npy dtypes.
#include "partita/core/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace partita {
namespace {

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);       // largest half
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);           // overflow: infinity
  EXPECT_EQ(float_to_half(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(1e-10f), 0x0000);
  EXPECT_EQ(half_to_float(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::nanf("")))));
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::nanf("")))));
}

// Every finite 16-bit value survives float and back; narrowing picks the nearest value
// (ties to the even one).
TEST(Half, RoundTripsAndRoundsToNearest) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = half_to_float(bits);
    if (!std::isnan(f)) {
      ASSERT_EQ(float_to_half(f), bits) << h;
    }
    const float b = bf16_to_float(bits);
    if (!std::isnan(b)) {
      ASSERT_EQ(float_to_bf16(b), bits) << h;
    }
  }
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  std::uniform_real_distribution<float> small(-1e-4f, 1e-4f);
  for (int i = 0; i < 200000; ++i) {
    const float x = i % 2 ? u(gen) : small(gen);
    for (int kind = 0; kind < 2; ++kind) {
      const uint16_t n = kind == 0 ? float_to_half(x) : float_to_bf16(x);
      const auto widen = [&](uint16_t v) {
        return kind == 0 ? half_to_float(v) : bf16_to_float(v);
      };
      const double err = std::abs(static_cast<double>(widen(n)) - x);
      if (std::isinf(widen(n))) continue;  // beyond the largest half
      for (int d : {-1, 1}) {
        const auto other = static_cast<uint16_t>(n + d);
        const float w = widen(other);
        if (std::isnan(w) || std::isinf(w) || (other & 0x7fff) == 0x7fff) continue;
        if ((n & 0x7fff) == 0 && d == -1) continue;  // crossing zero changes the sign
        ASSERT_LE(err, std::abs(static_cast<double>(w) - x)) << x << " kind " << kind;
      }
    }
  }
}

TEST(Half, NarrowAndWidenArrays) {
  const float in[4] = {1.5f, -0.25f, 3.0f, 1024.0f};
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    uint8_t buf[16];
    float out[4];
    narrow_floats(in, 4, t, buf);
    widen_to_floats(buf, 4, t, out);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], in[i]) << dtype_name(t);
  }
  EXPECT_THROW(narrow_floats(in, 4, DType::kInt64, nullptr), Error);
  EXPECT_TRUE(is_feature_dtype(DType::kBFloat16));
  EXPECT_FALSE(is_feature_dtype(DType::kFloat64));
  EXPECT_STREQ(dtype_descr(DType::kBFloat16), "<u2");
  EXPECT_STREQ(dtype_name(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(dtype_size(DType::kFloat16), 2u);
}

}  // namespace
}  // namespace partita
