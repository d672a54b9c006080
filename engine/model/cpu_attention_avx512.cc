// The AVX-512 attention row (cpu_attention.h). One zmm holds the contract's
// 16 virtual lanes, as in engine/kernels/matmul_avx512.cc: a score is 16
// lane chains over head_dim (a masked fma for a tail, so the other lanes
// keep their bits), reduced by the fixed 16 -> 8 -> 4 -> 2 -> 1 tree. Four
// keys run side by side only to hide the fma latency. The weighted sum of V
// keeps 64 outputs in four registers across all keys: for each element the
// same fma chain, key by key, as `o[d] = fma(p[j], v_j[d], o[d])`.
#include <cmath>

#include "engine/kernels/avx512_lanes.h"
#include "engine/model/cpu_attention.h"
#include "engine/model/cpu_ops.h"

namespace samebits::model::cpu {
namespace {

// The lanes are reduced by the contract's tree (C1), shared with the
// AVX-512 matrix kernels.
using kernels::internal::Reduce16;

// Computes `KEYS` scores: s[j] = dot(q, k_j, n) * scale for keys k0, k0 + stride, ...
template <int KEYS>
inline void Scores(const float* q, const float* k0, int64_t stride, int n, float scale, float* s) {
  __m512 acc[KEYS];
  for (int j = 0; j < KEYS; ++j) acc[j] = _mm512_setzero_ps();
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    const __m512 qv = _mm512_loadu_ps(q + c);
    for (int j = 0; j < KEYS; ++j) {
      acc[j] = _mm512_fmadd_ps(qv, _mm512_loadu_ps(k0 + j * stride + c), acc[j]);
    }
  }
  if (c < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - c)) - 1u);
    const __m512 qv = _mm512_maskz_loadu_ps(m, q + c);
    for (int j = 0; j < KEYS; ++j) {
      acc[j] = _mm512_mask3_fmadd_ps(qv, _mm512_maskz_loadu_ps(m, k0 + j * stride + c), acc[j], m);
    }
  }
  for (int j = 0; j < KEYS; ++j) s[j] = Reduce16(acc[j]) * scale;
}

}  // namespace

void AttentionRowAvx512(const kernels::KernelTable& kt, const numerics::MathLibrary& math,
                        const float* q, const float* k_rows, const float* v_rows, int64_t stride,
                        int first, int last, int head_dim, float scale, float* scores, float* o,
                        bool reverse_v_for_tests) {
  if (reverse_v_for_tests) {
    // The negative control keeps the portable code path; it only has to
    // differ from the reference.
    AttentionRow(kt, math, q, k_rows, v_rows, stride, first, last, head_dim, scale, scores, o,
                 true);
    return;
  }
  const int n = last - first + 1;
  const float* k = k_rows + static_cast<int64_t>(first) * stride;
  const float* v = v_rows + static_cast<int64_t>(first) * stride;
  int j = 0;
  for (; j + 4 <= n; j += 4) Scores<4>(q, k + j * stride, stride, head_dim, scale, scores + j);
  for (; j < n; ++j) Scores<1>(q, k + j * stride, stride, head_dim, scale, scores + j);
  SoftmaxInPlace(scores, n, math);

  // V: 64 outputs at a time in registers, keys in increasing order.
  int d = 0;
  for (; d + 64 <= head_dim; d += 64) {
    __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    __m512 o2 = _mm512_setzero_ps(), o3 = _mm512_setzero_ps();
    for (int key = 0; key < n; ++key) {
      const __m512 p = _mm512_set1_ps(scores[key]);
      const float* vk = v + key * stride + d;
      o0 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vk), o0);
      o1 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vk + 16), o1);
      o2 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vk + 32), o2);
      o3 = _mm512_fmadd_ps(p, _mm512_loadu_ps(vk + 48), o3);
    }
    _mm512_storeu_ps(o + d, o0);
    _mm512_storeu_ps(o + d + 16, o1);
    _mm512_storeu_ps(o + d + 32, o2);
    _mm512_storeu_ps(o + d + 48, o3);
  }
  for (; d < head_dim; d += 16) {
    const __mmask16 m = head_dim - d >= 16 ? static_cast<__mmask16>(0xffff)
                                           : static_cast<__mmask16>((1u << (head_dim - d)) - 1u);
    __m512 acc = _mm512_setzero_ps();
    for (int key = 0; key < n; ++key) {
      const __m512 p = _mm512_set1_ps(scores[key]);
      acc = _mm512_fmadd_ps(p, _mm512_maskz_loadu_ps(m, v + key * stride + d), acc);
    }
    _mm512_mask_storeu_ps(o + d, m, acc);
  }
}

}  // namespace samebits::model::cpu
