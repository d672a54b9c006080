// The contract's 16 virtual lanes in one zmm register (C1), for every
// AVX-512 translation unit: matmul_avx512.cc and attention_avx512.cc. The reduction tree is written
// here once so that the two cannot drift apart.
//
// Internal header: include it only from a file compiled with the AVX-512
// flags (a name ending in _avx512.cc). Reduce16 sits in an anonymous
// namespace, so each object file keeps its own private copy and the linker
// can never hand AVX-512 code to a baseline caller (engine/kernels/README.md).
#pragma once

// GCC 12 reports a false "used uninitialized" inside its own AVX-512
// headers (their casts start from _mm256_undefined_pd); clang does not, and
// does not know -Wmaybe-uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace samebits::kernels::internal {
namespace {

// Returns the 16 lanes reduced by the contract's tree:
// s8[j] = a[j] + a[j+8], s4[j] = s8[j] + s8[j+4], s2[j] = s4[j] + s4[j+2],
// s2[0] + s2[1].
inline float Reduce16(__m512 acc) {
  const __m256 lo = _mm512_castps512_ps256(acc);
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1));
  const __m256 s8 = _mm256_add_ps(lo, hi);
  const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
  const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
  return _mm_cvtss_f32(_mm_add_ss(s2, _mm_shuffle_ps(s2, s2, 1)));
}

}  // namespace
}  // namespace samebits::kernels::internal
