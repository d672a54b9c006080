// The hardware-FMA build of `Dot` (see dot.h). This file gets -mavx2 -mfma
// from engine/CMakeLists.txt; it is only called after dot.cc has checked
// that the CPU and OS support those instructions.
#include "engine/numerics/lanes.h"

namespace samebits::numerics::fma_build {

float DotF32(const float* x, const float* w, size_t n) { return Dot(x, w, n); }
float DotF16(const float* x, const F16* w, size_t n) { return Dot(x, w, n); }
float DotBF16(const float* x, const BF16* w, size_t n) { return Dot(x, w, n); }

}  // namespace samebits::numerics::fma_build
