// The contract's 16-virtual-lane reduction order (README.md, clause C1),
// written once for scalar code. Every fast path reproduces these functions
// bit for bit; tests pin them against this file.
#pragma once

#include <cmath>
#include <cstddef>

#include "engine/numerics/half.h"

namespace samebits::numerics {

inline constexpr int kLanes = 16;

// Returns the lanes reduced by the contract's fixed tree:
// 16 -> 8 (j + j+8), 8 -> 4 (j + j+4), 4 -> 2 (j + j+2), 2 -> 1.
inline float ReduceLanes(const float acc[kLanes]) {
  float s8[8];
  for (int j = 0; j < 8; ++j) s8[j] = acc[j] + acc[j + 8];
  float s4[4];
  for (int j = 0; j < 4; ++j) s4[j] = s8[j] + s8[j + 4];
  const float s2_0 = s4[0] + s4[2];
  const float s2_1 = s4[1] + s4[3];
  return s2_0 + s2_1;
}

// Returns sum_i x[i] * w[i] in the contract's order: element i in lane
// i mod 16, `acc = fma(x, w, acc)` per lane in index order, then the tree.
// `W` is float, BF16 or F16; the conversion to f32 is exact.
template <typename W>
inline float Dot(const float* x, const W* w, size_t n) {
  float acc[kLanes] = {};
  for (size_t i = 0; i < n; ++i) {
    acc[i % kLanes] = std::fma(x[i], ToFloat(w[i]), acc[i % kLanes]);
  }
  return ReduceLanes(acc);
}

// Returns sum_i x[i] in the contract's order (plain additions per lane).
inline float Sum(const float* x, size_t n) {
  float acc[kLanes] = {};
  for (size_t i = 0; i < n; ++i) acc[i % kLanes] = acc[i % kLanes] + x[i];
  return ReduceLanes(acc);
}

}  // namespace samebits::numerics
