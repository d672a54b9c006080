// The portable exp (numerics/portable_math.cc, contract C3) eight floats at
// a time in AVX2, for attention's softmax and SwiGLU's SiLU: exp_avx512.cc's
// steps four doubles to a vector, each one IEEE operation in a lane (no
// fma, as the scalar ExpDouble has none; the conversions round to nearest
// even as the scalar casts do), so the same bits. AVX2 has no 64-bit
// arithmetic shift and no two-vector permute: (k - j) / 32 is a logical
// shift of k biased to be non-negative, and 2^(j/32) a gather from the
// table. tests/kernels/exp_test.cc checks every table's exp against
// numerics::PortableExp.
//
// Why: on this project's Zen 3 the scalar exp took 6.8% of an int8 Q4_K
// bench's samples (`perf record -e cpu-clock`); this one takes 3.2 ns an
// exp against the scalar's 12.7 (best of 31 passes over 65536 inputs).
#include <immintrin.h>

#include <cstdint>

#include "engine/kernels/kernel_tables.h"
#include "engine/numerics/portable_exp.h"

namespace samebits::kernels::internal {
namespace {

namespace pe = numerics::portable_exp;

// k + kBias is non-negative and a multiple of 32 plus j for every k of an
// input in [-104, 88.72] (|k| < 4900); outside that range the result is
// replaced (Exp8), so its k need not be right.
constexpr int64_t kBias = int64_t{1} << 25;

// e^t for four doubles, step for step ExpDouble.
inline __m256d ExpDouble4(__m256d t) {
  // kd = the integer nearest t * 32 / ln2, by the 1.5 * 2^52 shift; its
  // value k is also the difference of the shifted sum's bits and the
  // shift's (both lie in [2^52, 2^53), where doubles are the integers).
  const __m256d shifter = _mm256_set1_pd(0x1.8p52);
  const __m256d shifted = _mm256_add_pd(_mm256_mul_pd(t, _mm256_set1_pd(pe::k32OverLn2)), shifter);
  const __m256d kd = _mm256_sub_pd(shifted, shifter);
  const __m256d r =
      _mm256_sub_pd(_mm256_sub_pd(t, _mm256_mul_pd(kd, _mm256_set1_pd(pe::kLn2Over32Hi))),
                    _mm256_mul_pd(kd, _mm256_set1_pd(pe::kLn2Over32Lo)));
  // A plain array: an initializer_list here would be weak template code.
  constexpr double kTaylor[4] = {1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5};
  __m256d p = _mm256_set1_pd(1.0 / 720.0);
  for (const double c : kTaylor) p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(c));
  p = _mm256_add_pd(_mm256_mul_pd(_mm256_mul_pd(p, r), r), r);
  const __m256i k = _mm256_sub_epi64(_mm256_castpd_si256(shifted), _mm256_castpd_si256(shifter));
  // j = k mod 32 indexes the table whatever k is, so no lane reads past it.
  const __m256i j = _mm256_and_si256(k, _mm256_set1_epi64x(31));
  // m + 1023, m = (k - j) / 32: ((k + kBias) >> 5) - kBias / 32 + 1023.
  const __m256i biased_exponent =
      _mm256_add_epi64(_mm256_srli_epi64(_mm256_add_epi64(k, _mm256_set1_epi64x(kBias)), 5),
                       _mm256_set1_epi64x(1023 - kBias / 32));
  const __m256d table = _mm256_i64gather_pd(pe::kExp2Table, j, 8);
  const __m256d pow2 = _mm256_castsi256_pd(_mm256_slli_epi64(biased_exponent, 52));
  return _mm256_mul_pd(_mm256_add_pd(table, _mm256_mul_pd(table, p)), pow2);
}

// PortableExp of eight floats: NaN gives x + x, above the largest finite
// result +inf, below -104 +0, else ExpDouble rounded once to float.
inline __m256 Exp8(__m256 x) {
  const __m128 lo = _mm256_cvtpd_ps(ExpDouble4(_mm256_cvtps_pd(_mm256_castps256_ps128(x))));
  const __m128 hi = _mm256_cvtpd_ps(ExpDouble4(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1))));
  __m256 out = _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
  out = _mm256_blendv_ps(out, _mm256_setzero_ps(),
                         _mm256_cmp_ps(x, _mm256_set1_ps(pe::kSmallestNonzero), _CMP_LT_OQ));
  out = _mm256_blendv_ps(out, _mm256_set1_ps(__builtin_huge_valf()),
                         _mm256_cmp_ps(x, _mm256_set1_ps(pe::kLargestFinite), _CMP_GT_OQ));
  return _mm256_blendv_ps(out, _mm256_add_ps(x, x), _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

}  // namespace

void Avx2ExpPortable(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, Exp8(_mm256_loadu_ps(x + i)));
  if (i < n) {
    // The tail through a zeroed buffer: AVX2's masked loads would do, but
    // a plain copy reads no byte past x + n either.
    alignas(32) float tail[8] = {};
    for (int64_t t = 0; t < n - i; ++t) tail[t] = x[i + t];
    _mm256_store_ps(tail, Exp8(_mm256_load_ps(tail)));
    for (int64_t t = 0; t < n - i; ++t) x[i + t] = tail[t];
  }
}

}  // namespace samebits::kernels::internal
