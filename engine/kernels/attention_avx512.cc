// The AVX-512 attention halves (KernelTable::attention_scores and
// attention_values). One zmm holds the contract's 16 virtual lanes, as in
// matmul_avx512.cc: a score is 16 lane chains over head_dim (a masked fma
// for a tail, so the other lanes keep their bits), reduced by the fixed
// 16 -> 8 -> 4 -> 2 -> 1 tree. Four keys run side by side only to hide the
// fma latency. The weighted sum of V keeps 64 outputs in four registers
// across all keys: for each element the same fma chain, key by key, as
// `o[d] = fma(p[j], v_j[d], o[d])` (C5).
#include <cstdint>

#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/kernel_tables.h"

namespace samebits::kernels::internal {
namespace {

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

void Avx512AttentionScores(const float* q, const float* k_rows, int64_t stride, int n, int head_dim,
                           float scale, float* s) {
  int j = 0;
  for (; j + 4 <= n; j += 4) Scores<4>(q, k_rows + j * stride, stride, head_dim, scale, s + j);
  for (; j < n; ++j) Scores<1>(q, k_rows + j * stride, stride, head_dim, scale, s + j);
}

void Avx512AttentionValues(const float* p, const float* v_rows, int64_t stride, int n, int head_dim,
                           float* o) {
  // 64 outputs at a time in registers, keys in increasing order.
  int d = 0;
  for (; d + 64 <= head_dim; d += 64) {
    __m512 o0 = _mm512_setzero_ps(), o1 = _mm512_setzero_ps();
    __m512 o2 = _mm512_setzero_ps(), o3 = _mm512_setzero_ps();
    for (int key = 0; key < n; ++key) {
      const __m512 pk = _mm512_set1_ps(p[key]);
      const float* vk = v_rows + key * stride + d;
      o0 = _mm512_fmadd_ps(pk, _mm512_loadu_ps(vk), o0);
      o1 = _mm512_fmadd_ps(pk, _mm512_loadu_ps(vk + 16), o1);
      o2 = _mm512_fmadd_ps(pk, _mm512_loadu_ps(vk + 32), o2);
      o3 = _mm512_fmadd_ps(pk, _mm512_loadu_ps(vk + 48), o3);
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
      const __m512 pk = _mm512_set1_ps(p[key]);
      acc = _mm512_fmadd_ps(pk, _mm512_maskz_loadu_ps(m, v_rows + key * stride + d), acc);
    }
    _mm512_mask_storeu_ps(o + d, m, acc);
  }
}

}  // namespace samebits::kernels::internal
