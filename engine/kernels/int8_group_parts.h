// The ISA-neutral parts of the integer profile's kernels by scale groups
// (C12.3), sixteen groups to a batch, one to an f32 lane: the F16 scales of
// sixteen blocks as words for one vector conversion (AVX2, AVX-512, NEON),
// and an activation row's side of a batch (AVX2, NEON). int8_group_rows.h
// has the loops over them.
//
// Internal header: ISA-neutral; everything is in an anonymous namespace and
// nothing here instantiates a standard-library template (isa_symbols_test).
// Little-endian targets only (the ISAs that include it).
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/numerics/int8_dot.h"

namespace samebits::kernels::internal {
namespace {

// Where ggml's blocks of 32 keep their fields, one scale group a block:
// kBytes the block's size, kWeightOffset the quants' offset (8 for Q4_0,
// 16 for Q5_0), kMinAt where the F16 m sits (0: no min), kHighBitsAt where
// the 32 fifth bits sit (0: none), kQuantsAt where the 16 bytes of nibbles
// start (low nibbles weights 0-15, high ones 16-31); d sits at 0. Each ISA's
// Block32 unpacks from these.
template <int kBlockBytes, int kOffset, int kMinOffset, int kHighBitsOffset, int kQuantsOffset>
struct Block32Layout {
  static constexpr int kBytes = kBlockBytes;
  static constexpr int kSub = 32;
  static constexpr int kGroupsPerBlock = 1;
  static constexpr int kWeightOffset = kOffset;
  static constexpr int kMinAt = kMinOffset;
  static constexpr int kHighBitsAt = kHighBitsOffset;
  static constexpr int kQuantsAt = kQuantsOffset;
  static constexpr int kMinSign = kMinAt > 0 ? 1 : 0;
};
using Q4_0Layout = Block32Layout<18, 8, 0, 0, 2>;
using Q4_1Layout = Block32Layout<20, 0, 2, 0, 4>;
using Q5_0Layout = Block32Layout<22, 16, 0, 2, 6>;
using Q5_1Layout = Block32Layout<24, 0, 2, 4, 8>;

// Q8_0: an F16 d, then 32 signed quants.
struct Q8_0Layout {
  static constexpr int kBytes = 34;
  static constexpr int kSub = 32;
  static constexpr int kGroupsPerBlock = 1;
  static constexpr int kWeightOffset = 0;
  static constexpr int kMinSign = 0;
};

// Q4_K and Q5_K: d, dmin, 12 bytes of scales, Q5_K's 32 bytes of fifth
// bits, 128 bytes of nibbles; eight groups of 32, each with a min.
template <bool kFifthBits>
struct KQuantLayout {
  static constexpr int kBytes = kFifthBits ? 176 : 144;
  static constexpr int kQuantsAt = kFifthBits ? 48 : 16;
  static constexpr int kSub = 32;
  static constexpr int kGroupsPerBlock = 8;
  static constexpr int kWeightOffset = 0;
  static constexpr int kMinSign = -1;
};

// Q6_K: 128 bytes of low nibbles, 64 of high bits, 16 signed scales, an
// F16 d at 208; sixteen groups of 16, the quants offset by 32.
struct Q6_KLayout {
  static constexpr int kBytes = 210;
  static constexpr int kSub = 16;
  static constexpr int kGroupsPerBlock = 16;
  static constexpr int kWeightOffset = 32;
  static constexpr int kMinSign = 0;
};

// word[j] holds the F16 at byte `offset` of blocks g0 + 4j .. g0 + 4j + 3
// (`block_bytes` apart), the first in its low 16 bits; zero from block
// g0 + n on.
// Assembled in general registers: sixteen 2-byte stores read back as one
// vector stalled the store-to-load forwarding (29 % of the AVX-512 kernel's
// samples), and a gather took 23 %.
struct HalfWords {
  uint64_t word[4];
};
inline HalfWords BlockHalfWords(const uint8_t* row, int64_t block_bytes, int64_t g0, int n,
                                int offset) {
  const auto half = [&](int i) -> uint64_t {
    uint16_t h;
    std::memcpy(&h, row + (g0 + i) * block_bytes + offset, 2);
    return h;
  };
  const auto word = [&](int j, int valid) {
    uint64_t w = 0;
    for (int i = 0; i < 4; ++i) w |= (4 * j + i < valid ? half(4 * j + i) : 0) << (16 * i);
    return w;
  };
  // A full batch (every one but a row's last) without the bound checks:
  // written apart, the compiler keeps the common case straight-line.
  if (n == 16) return {{word(0, 16), word(1, 16), word(2, 16), word(3, 16)}};
  return {{word(0, n), word(1, n), word(2, n), word(3, n)}};
}

// One activation row's side of a batch of groups [g0, g0 + n) of `sub`
// weights (groups_per_block to an activation block): its quants, zero past
// the n groups, and per group the scale of its block and the exact sum of
// its quants (zero past n).
struct GroupActivations {
  alignas(64) int8_t q[512];
  alignas(32) float d[16];
  alignas(32) int32_t asum[16];
};
inline void GatherGroupActivations(const numerics::Int8Activations& x, int sub,
                                   int groups_per_block, int64_t g0, int n, GroupActivations* out) {
  std::memset(out, 0, sizeof(*out));
  std::memcpy(out->q, x.q + g0 * sub, static_cast<size_t>(n) * static_cast<size_t>(sub));
  for (int g = 0; g < n; ++g) {
    out->d[g] = x.d[(g0 + g) / groups_per_block];
    const int16_t* s = x.sums + (g0 + g) * sub / numerics::kActivationSumSpan;
    int32_t sum = 0;
    for (int i = 0; i < sub / numerics::kActivationSumSpan; ++i) sum += s[i];
    out->asum[g] = sum;
  }
}

}  // namespace
}  // namespace samebits::kernels::internal
