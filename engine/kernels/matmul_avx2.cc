// The AVX2 kernel table. The contract's 16 virtual lanes (C1) live in two
// ymm registers: `lo` holds lanes 0-7 and `hi` lanes 8-15. Each lane is one
// fma chain in index order; a k tail is computed on a zero-padded copy and
// then blended in only for its own lanes (a plain fma(0, 0, acc) would turn
// a -0.0 lane into +0.0); the lanes are reduced by the fixed
// 16 -> 8 -> 4 -> 2 -> 1 tree. The register block itself is
// register_block.h's, over this file's vector operations (`Ops`).
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "engine/kernels/attention_loops.h"
#include "engine/kernels/avx2_lanes.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/kernels/quant_int8_loops.h"
#include "engine/kernels/quant_loaders.h"
#include "engine/kernels/register_block.h"
#include "engine/kernels/tiling.h"

namespace samebits::kernels::internal {
namespace {

// Weight loaders: 16 weights as 16 exact f32 lanes.
struct LoadF32 {
  using T = float;
  static V16 Full(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
};
struct LoadBF16 {
  using T = uint16_t;
  // A BF16 is the top half of an f32: widening and shifting left by 16 is exact.
  static __m256 Widen(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static V16 Full(const uint16_t* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {Widen(_mm256_castsi256_si128(h)), Widen(_mm256_extracti128_si256(h, 1))};
  }
};
struct LoadF16 {
  using T = uint16_t;
  // VCVTPH2PS is exact for every F16, subnormals included.
  static V16 Full(const uint16_t* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
};

// The vector operations quant_loaders.h builds its loaders from, and
// BlockLoaderSteps (tiling.h) runs its fma chains with.
struct Ops {
  using V = V16;
  // No masked loads: register_block.h's zero-padded tail blends with this.
  using TailMask = internal::TailMask;
  static V16 Zero() { return Zero16(); }
  static V16 LoadX(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static V16 Fma(const V16& x, const V16& w, const V16& acc) { return Fma16(x, w, acc); }
  static float Reduce(const V16& acc) { return Reduce16(acc); }
  static I16 U8(const uint8_t* p) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return {_mm256_cvtepu8_epi32(b), _mm256_cvtepu8_epi32(_mm_srli_si128(b, 8))};
  }
  static I16 I8(const uint8_t* p) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return {_mm256_cvtepi8_epi32(b), _mm256_cvtepi8_epi32(_mm_srli_si128(b, 8))};
  }
  static I16 And(const I16& a, int b) {
    const __m256i v = _mm256_set1_epi32(b);
    return {_mm256_and_si256(a.lo, v), _mm256_and_si256(a.hi, v)};
  }
  static I16 Shr(const I16& a, int n) {
    const __m128i count = _mm_cvtsi32_si128(n);
    return {_mm256_srl_epi32(a.lo, count), _mm256_srl_epi32(a.hi, count)};
  }
  static I16 Shl(const I16& a, int n) {
    const __m128i count = _mm_cvtsi32_si128(n);
    return {_mm256_sll_epi32(a.lo, count), _mm256_sll_epi32(a.hi, count)};
  }
  static I16 Or(const I16& a, const I16& b) {
    return {_mm256_or_si256(a.lo, b.lo), _mm256_or_si256(a.hi, b.hi)};
  }
  static I16 AddInt(const I16& a, int b) {
    const __m256i v = _mm256_set1_epi32(b);
    return {_mm256_add_epi32(a.lo, v), _mm256_add_epi32(a.hi, v)};
  }
  static I16 BitLanes(uint32_t bits) {
    const __m256i v = _mm256_set1_epi32(static_cast<int>(bits));
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i one = _mm256_set1_epi32(1);
    return {_mm256_and_si256(_mm256_srlv_epi32(v, index), one),
            _mm256_and_si256(_mm256_srlv_epi32(_mm256_srli_epi32(v, 8), index), one)};
  }
  static V16 ToF32(const I16& a) { return {_mm256_cvtepi32_ps(a.lo), _mm256_cvtepi32_ps(a.hi)}; }
  static V16 MulS(const V16& a, float b) {
    const __m256 v = _mm256_set1_ps(b);
    return {_mm256_mul_ps(a.lo, v), _mm256_mul_ps(a.hi, v)};
  }
  static V16 AddS(const V16& a, float b) {
    const __m256 v = _mm256_set1_ps(b);
    return {_mm256_add_ps(a.lo, v), _mm256_add_ps(a.hi, v)};
  }
  static V16 SubS(const V16& a, float b) {
    const __m256 v = _mm256_set1_ps(b);
    return {_mm256_sub_ps(a.lo, v), _mm256_sub_ps(a.hi, v)};
  }
  // F16C's scalar VCVTPH2PS: exact for every F16, subnormals included.
  static float Half(const uint8_t* p) {
    return _cvtsh_ss(static_cast<unsigned short>(p[0] | (p[1] << 8)));
  }
};

// What tiling.h needs: GEMV takes four rows at a time (eight ymm
// accumulators of the sixteen registers give eight independent fma chains);
// GEMM blocks are up to 3 activation rows x 2 weight rows, i.e. 12 of the 16
// ymm registers as accumulators, so each converted weight vector is used by
// three fmas.
struct Avx2 {
  using F32 = LoadF32;
  using F16 = LoadF16;
  using BF16 = LoadBF16;
  template <QuantType Q>
  using Quant = QuantLoader<Ops, Q>;
  static constexpr int kGemvRows = 4;
  static constexpr Hints kGemvHints = Hints::kNextBlock;
  static constexpr int kMaxMi = 3;
  static constexpr int kMaxRj = 2;
  template <class L, int MI, int RJ, Hints kHints>
  static constexpr BlockFn<typename L::T> kBlock = RegisterBlock<Ops, L, MI, RJ, kHints>;
};

void Axpy(float p, const float* v, float* o, int64_t n) {
  const __m256 pv = _mm256_set1_ps(p);
  int64_t d = 0;
  for (; d + 8 <= n; d += 8) {
    _mm256_storeu_ps(o + d, _mm256_fmadd_ps(pv, _mm256_loadu_ps(v + d), _mm256_loadu_ps(o + d)));
  }
  // Elementwise, so a scalar fma (one instruction under -mfma) gives the
  // same bits as a vector lane.
  for (; d < n; ++d) o[d] = __builtin_fmaf(p, v[d], o[d]);  // not std::fma: a weak symbol
}

}  // namespace

const KernelTable& Avx2Table() {
  static constexpr KernelTable kTable{Isa::kAvx2, Gemv<Avx2>, Gemm<Avx2>, Dot<Avx2>, Axpy,
                                      AttentionScoresBy<Dot<Avx2>>, AttentionValuesBy<Axpy>,
                                      Avx2ExpPortable, Avx2SoftmaxPortable, GemvQuant<Avx2>,
                                      GemmQuant<Avx2>,
                                      // The integer profile: int8_avx2.cc takes every row of the
                                      // quantized types; the definition would have any other.
                                      Int8Products<numerics::DotInt8, Avx2Int8Rows>::Gemv,
                                      Int8Products<numerics::DotInt8, Avx2Int8Rows>::Gemm};
  return kTable;
}

}  // namespace samebits::kernels::internal
