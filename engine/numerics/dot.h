// `Dot` (lanes.h) for each weight type, compiled a second time with the
// CPU's fused multiply-add instruction where the CPU has one.
//
// Why: on baseline x86-64 `std::fma` is a call into libm, which makes the
// reference pass ~5x slower than it needs to be. IEEE fma is correctly
// rounded whether it is an instruction or a library routine, and the source
// is the same template, so both builds give the same bits; the tests pin
// them against each other (numerics/dot_test) and the kernels' scalar table
// keeps the baseline build, so the claim is checked end to end as well.
#pragma once

#include <cstddef>

#include "engine/numerics/half.h"

namespace samebits::numerics {

// Each returns exactly `Dot(x, w, n)` (contract clause C1).
float FastDot(const float* x, const float* w, size_t n);
float FastDot(const float* x, const F16* w, size_t n);
float FastDot(const float* x, const BF16* w, size_t n);

// Returns "fma" when the hardware-FMA build is in use, "baseline" otherwise.
const char* FastDotVariant();

}  // namespace samebits::numerics
