// The contract's 16 virtual lanes (C1) in two ymm registers, for every AVX2
// translation unit: matmul_avx2.cc and int8_avx2.cc. `lo` holds lanes 0-7
// and `hi` lanes 8-15; the reduction tree is written here once so that the
// files cannot drift apart.
//
// Internal header: include it only from a file compiled with the AVX2 flags
// (a name ending in _avx2.cc). Everything sits in an anonymous namespace, so
// each object file keeps its own private copy and the linker can never hand
// AVX2 code to a baseline caller (engine/kernels/README.md).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace samebits::kernels::internal {
namespace {

// The 16 virtual lanes.
struct V16 {
  __m256 lo;
  __m256 hi;
};

inline V16 Zero16() {
  return {_mm256_setzero_ps(), _mm256_setzero_ps()};
}

inline V16 Fma16(const V16& x, const V16& w, const V16& acc) {
  return {_mm256_fmadd_ps(x.lo, w.lo, acc.lo), _mm256_fmadd_ps(x.hi, w.hi, acc.hi)};
}

inline V16 Mul16(const V16& a, const V16& b) {
  return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)};
}

// Returns the lanes of `updated` in [0, n) and those of `acc` elsewhere.
struct TailMask {
  explicit TailMask(int64_t n) {
    const __m256i count = _mm256_set1_epi32(static_cast<int>(n));
    lo = _mm256_castsi256_ps(_mm256_cmpgt_epi32(count, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
    hi = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(count, _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15)));
  }
  V16 Blend(const V16& acc, const V16& updated) const {
    return {_mm256_blendv_ps(acc.lo, updated.lo, lo), _mm256_blendv_ps(acc.hi, updated.hi, hi)};
  }
  __m256 lo;
  __m256 hi;
};

// Returns the lanes reduced by the contract's tree:
// s8[j] = a[j] + a[j+8], s4[j] = s8[j] + s8[j+4], s2[j] = s4[j] + s4[j+2],
// s2[0] + s2[1].
inline float Reduce16(const V16& acc) {
  const __m256 s8 = _mm256_add_ps(acc.lo, acc.hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

// 16 int32 lanes, as V16 (lanes 0-7 in `lo`).
struct I16 {
  __m256i lo;
  __m256i hi;
};

}  // namespace
}  // namespace samebits::kernels::internal
