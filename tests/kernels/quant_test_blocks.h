// Random block-quantized rows for the kernel tests (quant_matmul_test,
// int8_repack_test): random quants, and F16 scales drawn to reach every
// kind of value a checkpoint may hold.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/numerics/quant_blocks.h"
#include "tests/kernels/kernel_test_helpers.h"

namespace samebits::kernels::testing {

// Which scales a row's blocks may have. Infinite and NaN scales are kept to
// rows of their own: a row then produces one kind of NaN only (x86's
// default NaN from 0 * inf and inf - inf, or the scale's own payload), so
// its bits do not depend on which NaN operand an instruction propagates.
enum class Scales { kFinite, kInfinite, kNan };

// The byte offsets of a block's F16 scale fields (d, and m / dmin where the
// type has one).
inline std::vector<int> ScaleOffsets(numerics::QuantType type) {
  switch (type) {
    case numerics::QuantType::kQ8_0:
    case numerics::QuantType::kQ4_0:
    case numerics::QuantType::kQ5_0:
      return {0};
    case numerics::QuantType::kQ4_1:
    case numerics::QuantType::kQ5_1:
    case numerics::QuantType::kQ4_K:
    case numerics::QuantType::kQ5_K:
      return {0, 2};
    case numerics::QuantType::kQ6_K:
      return {208};
  }
  return {0};
}

// Returns an F16 scale: mostly ordinary (2^-10 .. 2^5, both signs), else
// +-0, a subnormal, the largest finite, or the row's infinity or NaN.
inline uint16_t DrawScale(SplitMix64& rng, Scales scales) {
  const uint16_t sign = (rng.Next() & 1u) ? 0x8000 : 0;
  const uint16_t mantissa = static_cast<uint16_t>(rng.Below(1024));
  switch (rng.Below(10)) {
    case 0:
      return sign;  // +-0
    case 1:
      return sign | static_cast<uint16_t>(1 + rng.Below(1023));  // subnormal
    case 2:
      return sign | 0x7BFF;  // 65504
    case 3:
      if (scales == Scales::kInfinite) return sign | 0x7C00;
      if (scales == Scales::kNan) return 0x7E55;  // one quiet NaN payload
      break;
    default:
      break;
  }
  const uint16_t exponent = static_cast<uint16_t>(5 + rng.Below(16));  // 2^-10 .. 2^5
  return sign | static_cast<uint16_t>(exponent << 10) | mantissa;
}

// Writes the F16 `h` little-endian at `p`.
inline void PutF16(uint8_t* p, uint16_t h) {
  p[0] = static_cast<uint8_t>(h & 0xff);
  p[1] = static_cast<uint8_t>(h >> 8);
}

// Returns `rows` rows of `blocks` random blocks of `type`.
inline std::vector<uint8_t> MakeBlocks(numerics::QuantType type, int64_t rows, int64_t blocks,
                                       Scales scales, uint64_t seed) {
  const numerics::QuantLayout& l = numerics::LayoutOf(type);
  SplitMix64 rng(seed);
  std::vector<uint8_t> out(static_cast<size_t>(rows * blocks * l.block_bytes));
  for (uint8_t& b : out) b = static_cast<uint8_t>(rng.Next());
  for (int64_t i = 0; i < rows * blocks; ++i) {
    uint8_t* block = out.data() + i * l.block_bytes;
    for (int offset : ScaleOffsets(type)) PutF16(block + offset, DrawScale(rng, scales));
  }
  return out;
}

}  // namespace samebits::kernels::testing
