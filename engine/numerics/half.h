// BF16 and F16 storage types with exact conversion to f32 and
// round-to-nearest-even conversion back. Pure integer code: the same bits on
// every platform, no dependence on F16C or hardware BF16 support.
#pragma once

#include <bit>
#include <cstdint>

namespace samebits::numerics {

struct BF16 {
  uint16_t bits = 0;
};
struct F16 {
  uint16_t bits = 0;
};
static_assert(sizeof(BF16) == 2 && sizeof(F16) == 2);

// Returns the f32 with the same value (exact: BF16 is the top half of an f32).
inline float ToFloat(BF16 h) {
  return std::bit_cast<float>(uint32_t{h.bits} << 16);
}

// Returns the f32 with the same value (exact for every F16, subnormals,
// infinities and NaNs included; a NaN keeps its payload's top bits).
inline float ToFloat(F16 h) {
  const uint32_t sign = uint32_t{h.bits & 0x8000u} << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1fu;
  uint32_t mant = h.bits & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal F16: normalise the mantissa into an f32 normal.
  uint32_t e = 113;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mant & 0x3ffu) << 13));
}

inline float ToFloat(float f) {
  return f;
}

// Returns `f` rounded to BF16, to nearest with ties to even; NaN stays a
// quiet NaN with its sign.
BF16 ToBF16(float f);

// Returns `f` rounded to F16, to nearest with ties to even, overflowing to
// infinity and rounding into subnormals; NaN stays a quiet NaN.
F16 ToF16(float f);

}  // namespace samebits::numerics
