// Reading the fields of a ggml quantized block: bytes, little-endian F16
// scales and 32-bit masks, whatever the host's byte order. Shared by the
// dequantizers (quant_blocks.cc) and the integer profile (int8_dot.cc), so
// both read a block the same way. Internal to engine/numerics; baseline code
// only (numerics/README.md).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/numerics/half.h"

namespace samebits::numerics::block_bytes {

inline uint8_t Byte(const std::byte* p, int i) {
  return static_cast<uint8_t>(p[i]);
}
// The little-endian F16 at `p`, converted exactly.
inline float HalfAt(const std::byte* p) {
  return ToFloat(F16{static_cast<uint16_t>(Byte(p, 0) | (Byte(p, 1) << 8))});
}
inline uint32_t U32At(const std::byte* p) {
  return uint32_t{Byte(p, 0)} | uint32_t{Byte(p, 1)} << 8 | uint32_t{Byte(p, 2)} << 16 |
         uint32_t{Byte(p, 3)} << 24;
}

}  // namespace samebits::numerics::block_bytes
