#pragma once
// 16-bit floating-point features: IEEE half (float16) and bfloat16, stored as their raw
// bits. Narrowing rounds to nearest, ties to even (NaN stays NaN); widening is exact.
#include <cstdint>
#include <cstring>

#include "partita/core/npy.h"

namespace partita {

inline uint16_t float_to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

uint16_t float_to_half(float x);
float half_to_float(uint16_t bits);

// Whether features may be stored as `dtype`: float32, float16 or bfloat16.
inline bool is_feature_dtype(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16;
}

// Writes `count` floats as `dtype` (a feature dtype) to `out`.
void narrow_floats(const float* in, int64_t count, DType dtype, void* out);
// Reads `count` values of `dtype` (a feature dtype) at `in` as floats.
void widen_to_floats(const void* in, int64_t count, DType dtype, float* out);

}  // namespace partita
