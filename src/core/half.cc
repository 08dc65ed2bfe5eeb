#include "partita/core/half.h"

#include "partita/core/error.h"

namespace partita {

uint16_t float_to_half(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exp = (bits >> 23) & 0xffu;
  uint32_t mant = bits & 0x7fffffu;
  if (exp == 0xff)
    return static_cast<uint16_t>(sign | 0x7c00u | (mant != 0 ? 0x200u | (mant >> 13) : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // too large: infinity
  if (e <= 0) {                                               // a subnormal half, or zero
    if (e < -10) return sign;
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into infinity
  return static_cast<uint16_t>(sign | half);
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

void narrow_floats(const float* in, int64_t count, DType dtype, void* out) {
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(out, in, static_cast<size_t>(count) * 4);
      return;
    case DType::kFloat16: {
      auto* o = static_cast<uint16_t*>(out);
      for (int64_t i = 0; i < count; ++i) o[i] = float_to_half(in[i]);
      return;
    }
    case DType::kBFloat16: {
      auto* o = static_cast<uint16_t*>(out);
      for (int64_t i = 0; i < count; ++i) o[i] = float_to_bf16(in[i]);
      return;
    }
    default:
      throw Error(fmt::format("internal: {} is not a feature dtype", dtype_name(dtype)));
  }
}

void widen_to_floats(const void* in, int64_t count, DType dtype, float* out) {
  switch (dtype) {
    case DType::kFloat32:
      std::memcpy(out, in, static_cast<size_t>(count) * 4);
      return;
    case DType::kFloat16: {
      const auto* h = static_cast<const uint16_t*>(in);
      for (int64_t i = 0; i < count; ++i) out[i] = half_to_float(h[i]);
      return;
    }
    case DType::kBFloat16: {
      const auto* h = static_cast<const uint16_t*>(in);
      for (int64_t i = 0; i < count; ++i) out[i] = bf16_to_float(h[i]);
      return;
    }
    default:
      throw Error(fmt::format("internal: {} is not a feature dtype", dtype_name(dtype)));
  }
}

}  // namespace partita
