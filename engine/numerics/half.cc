#include "engine/numerics/half.h"

namespace samebits::numerics {

BF16 ToBF16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return BF16{static_cast<uint16_t>((u >> 16) | 0x40u)};
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return BF16{static_cast<uint16_t>((u + rounding) >> 16)};
}

F16 ToF16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return F16{static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu))};
  if (abs >= 0x477ff000u) return F16{static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to >= 65520
  const int32_t exp = static_cast<int32_t>(abs >> 23) - 127;
  if (exp >= -14) {
    // Normal F16: drop 13 mantissa bits with round-to-nearest-even; a carry
    // into the exponent is the correct result.
    const uint32_t rebias = abs - (112u << 23);
    const uint32_t rounded = rebias + 0xfffu + ((rebias >> 13) & 1u);
    return F16{static_cast<uint16_t>(sign | (rounded >> 13))};
  }
  if (exp < -25) return F16{sign};  // below half the smallest subnormal
  // Subnormal F16: value = mant * 2^-24; shift the full significand.
  const uint32_t significand = (abs & 0x7fffffu) | 0x800000u;
  const int shift = -exp - 14 + 13;  // 14..24 for exp in [-25, -15]
  const uint32_t half_ulp = 1u << (shift - 1);
  const uint32_t remainder = significand & ((1u << shift) - 1u);
  uint32_t mant = significand >> shift;
  if (remainder > half_ulp || (remainder == half_ulp && (mant & 1u))) ++mant;
  return F16{static_cast<uint16_t>(sign | mant)};
}

}  // namespace samebits::numerics
