// A float's bits and back, for the numerics tests' bit-exact comparisons.
#pragma once

#include <bit>
#include <cstdint>

namespace samebits::numerics::test_support {

inline uint32_t Bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline float FromBits(uint32_t b) {
  return std::bit_cast<float>(b);
}

}  // namespace samebits::numerics::test_support
