// The scalar kernel table: each output is `numerics::Dot`, the contract's
// reference (C1), so this table is the specification the SIMD tables are
// tested against. It is portable C++ and runs on every target.
#include <cmath>

#include "engine/kernels/attention_loops.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"

namespace samebits::kernels::internal {
namespace {

using numerics::BF16;
using numerics::F16;

template <typename W>
void GemvTyped(const float* x, const W* w, int64_t k, int64_t row_begin, int64_t row_end,
               float* y) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    y[r - row_begin] = numerics::Dot(x, w + r * k, static_cast<size_t>(k));
  }
}

void Gemv(const float* x, const void* w, DType dtype, int64_t k, int64_t row_begin, int64_t row_end,
          float* y) {
  switch (dtype) {
    case DType::kF32:
      return GemvTyped(x, static_cast<const float*>(w), k, row_begin, row_end, y);
    case DType::kF16:
      return GemvTyped(x, static_cast<const F16*>(w), k, row_begin, row_end, y);
    case DType::kBF16:
      return GemvTyped(x, static_cast<const BF16*>(w), k, row_begin, row_end, y);
  }
}

// One GEMV per activation row: every output is a whole dot product, so the
// order of the loops cannot change a bit.
void Gemm(const float* x, int64_t m, const void* w, DType dtype, int64_t k, int64_t row_begin,
          int64_t row_end, float* y, int64_t ldy) {
  for (int64_t i = 0; i < m; ++i) Gemv(x + i * k, w, dtype, k, row_begin, row_end, y + i * ldy);
}

float Dot(const float* a, const float* b, int64_t n) {
  return numerics::Dot(a, b, static_cast<size_t>(n));
}

void Axpy(float p, const float* v, float* o, int64_t n) {
  for (int64_t d = 0; d < n; ++d) o[d] = std::fma(p, v[d], o[d]);
}

}  // namespace

const KernelTable& ScalarTable() {
  static constexpr KernelTable kTable{
      Isa::kScalar, Gemv, Gemm, Dot, Axpy, AttentionScoresBy<Dot>, AttentionValuesBy<Axpy>};
  return kTable;
}

}  // namespace samebits::kernels::internal
