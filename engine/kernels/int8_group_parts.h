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
