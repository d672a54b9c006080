// The scalar kernel table: each output is `numerics::Dot`, the contract's
// reference (C1), so this table is the specification the SIMD tables are
// tested against. It is portable C++ and runs on every target.
#include <cmath>
#include <vector>

#include "engine/kernels/attention_loops.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/quant_int8_loops.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"
#include "engine/numerics/portable_math.h"
#include "engine/numerics/quant_blocks.h"
#include "engine/numerics/softmax.h"

// x86-64's baseline has no fused multiply-add instruction, so there every
// std::fma of this table is a call into libm, whose fmaf (on a CPU with
// FMA) runs the very vfmadd instruction behind the call: the calls cost
// several times the arithmetic, and made cpu-scalar the slowest cells of
// the gate. The GEMV entries are therefore compiled twice (target_clones),
// for the baseline and for FMA, with everything they call inlined (flatten),
// and the loader picks the clone the CPU can run. Both compute the same C++:
// the same exactly-rounded fused multiply-adds in the same lanes and order
// (C1), so the same bits; a CPU without FMA runs the baseline clone, which
// calls libm as before. Elsewhere (aarch64: FMA is baseline) it is nothing.
//
// Not under ThreadSanitizer: the loader calls a clone's resolver while it
// relocates the program, before the TSan runtime is set up, and the
// instrumented resolver then crashes the program before main (every TSan
// test binary died while gtest listed its tests).
//
// GCC only: clang (14) refuses target_clones beside flatten ("multiversioning
// cannot be combined"), so a clang build keeps the plain functions.
#if defined(__SANITIZE_THREAD__)
#define SAMEBITS_NO_IFUNC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SAMEBITS_NO_IFUNC 1
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__has_attribute) && \
    !defined(SAMEBITS_NO_IFUNC)
#if __has_attribute(target_clones) && __has_attribute(flatten)
#define SAMEBITS_SCALAR_FMA_CLONES __attribute__((target_clones("fma", "default"), flatten))
#endif
#endif
#ifndef SAMEBITS_SCALAR_FMA_CLONES
#define SAMEBITS_SCALAR_FMA_CLONES
#endif

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

SAMEBITS_SCALAR_FMA_CLONES
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

// The specification of the quantized entries, written as their contract
// says: each row dequantized by ggml's reference routine, then `numerics::Dot`.
SAMEBITS_SCALAR_FMA_CLONES
void ScalarGemvQuant(const float* x, const std::byte* w, QuantType type, int64_t k,
                     int64_t row_begin, int64_t row_end, float* y) {
  const numerics::QuantLayout& layout = numerics::LayoutOf(type);
  const int64_t row_bytes = k / layout.block_elements * layout.block_bytes;
  thread_local std::vector<float> row;  // one row; this table is the slow reference
  row.resize(static_cast<size_t>(k));
  for (int64_t r = row_begin; r < row_end; ++r) {
    numerics::DequantizeRow(type, w + r * row_bytes, k, row.data());
    y[r - row_begin] = numerics::Dot(x, row.data(), static_cast<size_t>(k));
  }
}

void ScalarGemmQuant(const float* x, int64_t m, const std::byte* w, QuantType type, int64_t k,
                     int64_t row_begin, int64_t row_end, float* y, int64_t ldy) {
  for (int64_t i = 0; i < m; ++i) {
    ScalarGemvQuant(x + i * k, w, type, k, row_begin, row_end, y + i * ldy);
  }
}

}  // namespace

void ScalarExpPortable(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = numerics::PortableExp(x[i]);
}

// C4 over a table's exp_portable (numerics/softmax.h). Both live in this
// baseline file, the AVX2 table's too: numerics::SoftmaxWith must not be
// instantiated in an ISA-flagged file (README.md).
void ScalarSoftmaxPortable(float* s, int64_t n) {
  numerics::SoftmaxWith(s, n, ScalarExpPortable);
}

#ifdef SAMEBITS_KERNELS_HAVE_X86
void Avx2SoftmaxPortable(float* s, int64_t n) {
  numerics::SoftmaxWith(s, n, Avx2ExpPortable);
}
#endif

const KernelTable& ScalarTable() {
  static constexpr KernelTable kTable{Isa::kScalar,
                                      Gemv,
                                      Gemm,
                                      Dot,
                                      Axpy,
                                      AttentionScoresBy<Dot>,
                                      AttentionValuesBy<Axpy>,
                                      ScalarExpPortable,
                                      ScalarSoftmaxPortable,
                                      ScalarGemvQuant,
                                      ScalarGemmQuant,
                                      Int8Products<numerics::DotInt8>::Gemv,
                                      Int8Products<numerics::DotInt8>::Gemm};
  return kTable;
}

}  // namespace samebits::kernels::internal
