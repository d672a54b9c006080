#include "engine/numerics/dot.h"

#include "engine/numerics/lanes.h"

namespace samebits::numerics {

#if defined(__x86_64__)
namespace fma_build {
float DotF32(const float* x, const float* w, size_t n);
float DotF16(const float* x, const F16* w, size_t n);
float DotBF16(const float* x, const BF16* w, size_t n);
}  // namespace fma_build
#endif

namespace {

struct DotTable {
  float (*f32)(const float*, const float*, size_t);
  float (*f16)(const float*, const F16*, size_t);
  float (*bf16)(const float*, const BF16*, size_t);
  const char* variant;
};

float BaselineF32(const float* x, const float* w, size_t n) { return Dot(x, w, n); }
float BaselineF16(const float* x, const F16* w, size_t n) { return Dot(x, w, n); }
float BaselineBF16(const float* x, const BF16* w, size_t n) { return Dot(x, w, n); }

// Chosen once. `__builtin_cpu_supports` checks the OS's AVX state too.
const DotTable& Table() {
  static const DotTable table = [] {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      return DotTable{fma_build::DotF32, fma_build::DotF16, fma_build::DotBF16, "fma"};
    }
#endif
    return DotTable{BaselineF32, BaselineF16, BaselineBF16, "baseline"};
  }();
  return table;
}

}  // namespace

float FastDot(const float* x, const float* w, size_t n) { return Table().f32(x, w, n); }
float FastDot(const float* x, const F16* w, size_t n) { return Table().f16(x, w, n); }
float FastDot(const float* x, const BF16* w, size_t n) { return Table().bf16(x, w, n); }
const char* FastDotVariant() { return Table().variant; }

}  // namespace samebits::numerics
