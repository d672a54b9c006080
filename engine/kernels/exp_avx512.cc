// The portable exp (numerics/portable_math.cc, contract C3) sixteen floats
// at a time, for attention's softmax and SwiGLU's SiLU: the same double
// operations as its scalar ExpDouble, each one IEEE operation in a vector
// lane (no fma, as the scalar form has none; the conversions round to
// nearest even as the scalar casts do), so the same bits. tests/kernels/exp_test.cc checks
// them against numerics::PortableExp. Attention's softmax (C4) is built on
// it here, sixteen lanes at a time; tests/kernels/softmax_test.cc checks it.
#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/kernel_tables.h"
#include "engine/numerics/portable_exp.h"

namespace samebits::kernels::internal {
namespace {

namespace pe = numerics::portable_exp;

// e^t for eight doubles, step for step ExpDouble.
inline __m512d ExpDouble8(__m512d t) {
  // kd = the integer nearest t * 32 / ln2, by the 1.5 * 2^52 shift; its
  // value k is also the difference of the shifted sum's bits and the
  // shift's (both lie in [2^52, 2^53), where doubles are the integers).
  const __m512d shifter = _mm512_set1_pd(0x1.8p52);
  const __m512d shifted = _mm512_add_pd(_mm512_mul_pd(t, _mm512_set1_pd(pe::k32OverLn2)), shifter);
  const __m512d kd = _mm512_sub_pd(shifted, shifter);
  const __m512d r =
      _mm512_sub_pd(_mm512_sub_pd(t, _mm512_mul_pd(kd, _mm512_set1_pd(pe::kLn2Over32Hi))),
                    _mm512_mul_pd(kd, _mm512_set1_pd(pe::kLn2Over32Lo)));
  // A plain array: an initializer_list here would be weak template code.
  constexpr double kTaylor[4] = {1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5};
  __m512d p = _mm512_set1_pd(1.0 / 720.0);
  for (const double c : kTaylor) p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(c));
  p = _mm512_add_pd(_mm512_mul_pd(_mm512_mul_pd(p, r), r), r);
  const __m512i k = _mm512_sub_epi64(_mm512_castpd_si512(shifted), _mm512_castpd_si512(shifter));
  const __m512i j = _mm512_and_si512(k, _mm512_set1_epi64(31));
  const __m512i m = _mm512_srai_epi64(k, 5);  // (k - j) / 32
  // 2^(j/32) from the 32-entry table: two 16-entry lookups, bit 4 of j
  // choosing between them.
  const __m512d t0 = _mm512_loadu_pd(pe::kExp2Table), t1 = _mm512_loadu_pd(pe::kExp2Table + 8);
  const __m512d t2 = _mm512_loadu_pd(pe::kExp2Table + 16),
                t3 = _mm512_loadu_pd(pe::kExp2Table + 24);
  const __m512d table =
      _mm512_mask_blend_pd(_mm512_test_epi64_mask(j, _mm512_set1_epi64(16)),
                           _mm512_permutex2var_pd(t0, j, t1), _mm512_permutex2var_pd(t2, j, t3));
  const __m512d pow2 =
      _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(m, _mm512_set1_epi64(1023)), 52));
  return _mm512_mul_pd(_mm512_add_pd(table, _mm512_mul_pd(table, p)), pow2);
}

// PortableExp of sixteen floats: NaN gives x + x, above the largest finite
// result +inf, below -104 +0, else ExpDouble rounded once to float.
inline __m512 Exp16(__m512 x) {
  const __m256 lo = _mm512_cvtpd_ps(ExpDouble8(_mm512_cvtps_pd(_mm512_castps512_ps256(x))));
  const __m256 hi = _mm512_cvtpd_ps(ExpDouble8(
      _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)))));
  __m512 out = _mm512_castpd_ps(
      _mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
  out =
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(pe::kSmallestNonzero), _CMP_LT_OQ),
                           out, _mm512_setzero_ps());
  out = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(pe::kLargestFinite), _CMP_GT_OQ),
                             out, _mm512_set1_ps(__builtin_huge_valf()));
  return _mm512_mask_add_ps(out, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, x);
}

}  // namespace

void Avx512ExpPortable(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, Exp16(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(x + i, tail, Exp16(_mm512_maskz_loadu_ps(tail, x + i)));
  }
}

void Avx512SoftmaxPortable(float* s, int64_t n) {
  if (n <= 0) return;
  const auto tail_of = [](int64_t left) { return static_cast<__mmask16>((1u << left) - 1u); };
  // The maximum, exact in any order (C4): each lane keeps its greatest by
  // the scalar's rule (strictly greater replaces, so a NaN never does),
  // then the lanes in order by the same rule.
  __m512 lanes_max = _mm512_set1_ps(s[0]);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(s + i);
    lanes_max = _mm512_mask_mov_ps(lanes_max, _mm512_cmp_ps_mask(v, lanes_max, _CMP_GT_OQ), v);
  }
  if (i < n) {
    const __mmask16 tail = tail_of(n - i);
    const __m512 v = _mm512_maskz_loadu_ps(tail, s + i);
    lanes_max =
        _mm512_mask_mov_ps(lanes_max, _mm512_mask_cmp_ps_mask(tail, v, lanes_max, _CMP_GT_OQ), v);
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, lanes_max);
  float m = lanes[0];
  for (int l = 1; l < 16; ++l) m = lanes[l] > m ? lanes[l] : m;
  // e = exp(s - m), summed in the contract's lanes (element j in lane
  // j mod 16, acc + e in index order; a tail's other lanes keep their sums).
  const __m512 mv = _mm512_set1_ps(m);
  __m512 acc = _mm512_setzero_ps();
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_loadu_ps(s + i), mv));
    _mm512_storeu_ps(s + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  if (i < n) {
    const __mmask16 tail = tail_of(n - i);
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, s + i), mv));
    _mm512_mask_storeu_ps(s + i, tail, e);
    acc = _mm512_mask_add_ps(acc, tail, acc, e);
  }
  const __m512 z = _mm512_set1_ps(Reduce16(acc));
  for (i = 0; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(s + i, _mm512_div_ps(_mm512_loadu_ps(s + i), z));
  }
  if (i < n) {
    const __mmask16 tail = tail_of(n - i);
    _mm512_mask_storeu_ps(s + i, tail, _mm512_div_ps(_mm512_maskz_loadu_ps(tail, s + i), z));
  }
}

}  // namespace samebits::kernels::internal
