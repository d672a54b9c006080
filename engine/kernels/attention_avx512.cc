// The AVX-512 attention halves (KernelTable::attention_scores and
// attention_values). One zmm holds the contract's 16 virtual lanes, as in
// matmul_avx512.cc: a score is 16 lane chains over head_dim (a masked fma
// for a tail, so the other lanes keep their bits), reduced by the fixed
// 16 -> 8 -> 4 -> 2 -> 1 tree. The weighted sum of V keeps each output
// element's fma chain, key by key, as `o[d] = fma(p[j], v_j[d], o[d])` (C5).
//
// Up to four heads of a GQA group run together: each key row is loaded
// once for all of them (four times fewer K and V reads, which come from L2
// or beyond at decode), and their chains are independent, which hides the
// fma latency that one head's short chains cannot. Four keys run side by
// side in the scores for the same reason. Neither changes any chain.
#include <cstdint>
#include <type_traits>

#include "engine/kernels/avx512_lanes.h"
#include "engine/kernels/kernel_tables.h"

namespace samebits::kernels::internal {
namespace {

// The heads one pass of either half takes together: 4 heads x 4 keys of
// score accumulators, or 4 heads x 64 outputs, fill 16 of the 32 zmm.
constexpr int kGroupHeads = 4;

// Computes HEADS x KEYS scores: s[i * s_stride + j] = dot(q_i, k_j, n) *
// scale, q_i at q + i * n, k_j at k0 + j * stride.
template <int HEADS, int KEYS>
inline void Scores(const float* q, const float* k0, int64_t stride, int n, float scale, float* s,
                   int64_t s_stride) {
  __m512 acc[HEADS][KEYS];
  for (int i = 0; i < HEADS; ++i) {
    for (int j = 0; j < KEYS; ++j) acc[i][j] = _mm512_setzero_ps();
  }
  int c = 0;
  for (; c + 16 <= n; c += 16) {
    __m512 kv[KEYS];
    for (int j = 0; j < KEYS; ++j) kv[j] = _mm512_loadu_ps(k0 + j * stride + c);
    for (int i = 0; i < HEADS; ++i) {
      const __m512 qv = _mm512_loadu_ps(q + int64_t{i} * n + c);
      for (int j = 0; j < KEYS; ++j) acc[i][j] = _mm512_fmadd_ps(qv, kv[j], acc[i][j]);
    }
  }
  if (c < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - c)) - 1u);
    __m512 kv[KEYS];
    for (int j = 0; j < KEYS; ++j) kv[j] = _mm512_maskz_loadu_ps(m, k0 + j * stride + c);
    for (int i = 0; i < HEADS; ++i) {
      const __m512 qv = _mm512_maskz_loadu_ps(m, q + int64_t{i} * n + c);
      for (int j = 0; j < KEYS; ++j) acc[i][j] = _mm512_mask3_fmadd_ps(qv, kv[j], acc[i][j], m);
    }
  }
  for (int i = 0; i < HEADS; ++i) {
    for (int j = 0; j < KEYS; ++j) s[i * s_stride + j] = Reduce16(acc[i][j]) * scale;
  }
}

// Every key's scores for HEADS heads, four keys at a time.
template <int HEADS>
void ScoresOfHeads(const float* q, const float* k_rows, int64_t stride, int n, int head_dim,
                   float scale, float* s, int64_t s_stride) {
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    Scores<HEADS, 4>(q, k_rows + j * stride, stride, head_dim, scale, s + j, s_stride);
  }
  for (; j < n; ++j) {
    Scores<HEADS, 1>(q, k_rows + j * stride, stride, head_dim, scale, s + j, s_stride);
  }
}

// The weighted sum of V for HEADS heads: 64 outputs of each at a time in
// registers, keys in increasing order; a tail of head_dim in masked 16s.
template <int HEADS>
void ValuesOfHeads(const float* p, int64_t p_stride, const float* v_rows, int64_t stride, int n,
                   int head_dim, float* o) {
  int d = 0;
  for (; d + 64 <= head_dim; d += 64) {
    __m512 acc[HEADS][4];
    for (int i = 0; i < HEADS; ++i) {
      for (int c = 0; c < 4; ++c) acc[i][c] = _mm512_setzero_ps();
    }
    for (int key = 0; key < n; ++key) {
      const float* vk = v_rows + key * stride + d;
      __m512 vv[4];
      for (int c = 0; c < 4; ++c) vv[c] = _mm512_loadu_ps(vk + int64_t{16} * c);
      for (int i = 0; i < HEADS; ++i) {
        const __m512 pk = _mm512_set1_ps(p[i * p_stride + key]);
        for (int c = 0; c < 4; ++c) acc[i][c] = _mm512_fmadd_ps(pk, vv[c], acc[i][c]);
      }
    }
    for (int i = 0; i < HEADS; ++i) {
      for (int c = 0; c < 4; ++c)
        _mm512_storeu_ps(o + int64_t{i} * head_dim + d + int64_t{16} * c, acc[i][c]);
    }
  }
  for (; d < head_dim; d += 16) {
    const __mmask16 m = head_dim - d >= 16 ? static_cast<__mmask16>(0xffff)
                                           : static_cast<__mmask16>((1u << (head_dim - d)) - 1u);
    __m512 acc[HEADS];
    for (int i = 0; i < HEADS; ++i) acc[i] = _mm512_setzero_ps();
    for (int key = 0; key < n; ++key) {
      const __m512 vv = _mm512_maskz_loadu_ps(m, v_rows + key * stride + d);
      for (int i = 0; i < HEADS; ++i) {
        acc[i] = _mm512_fmadd_ps(_mm512_set1_ps(p[i * p_stride + key]), vv, acc[i]);
      }
    }
    for (int i = 0; i < HEADS; ++i) _mm512_mask_storeu_ps(o + int64_t{i} * head_dim + d, m, acc[i]);
  }
}

// Calls run(group, i) over the heads [0, heads) in groups of kGroupHeads,
// then a pair, then one at a time: `group` is a std::integral_constant with
// the group's size (a template argument of the halves above), `i` its first
// head.
template <class Run>
void InHeadGroups(int heads, Run run) {
  int i = 0;
  for (; i + kGroupHeads <= heads; i += kGroupHeads) {
    run(std::integral_constant<int, kGroupHeads>{}, i);
  }
  if (i + 2 <= heads) {
    run(std::integral_constant<int, 2>{}, i);
    i += 2;
  }
  for (; i < heads; ++i) run(std::integral_constant<int, 1>{}, i);
}

}  // namespace

void Avx512AttentionScores(const float* q, int heads, const float* k_rows, int64_t stride, int n,
                           int head_dim, float scale, float* s, int64_t s_stride) {
  InHeadGroups(heads, [&](auto group, int i) {
    ScoresOfHeads<decltype(group)::value>(q + int64_t{i} * head_dim, k_rows, stride, n, head_dim,
                                          scale, s + i * s_stride, s_stride);
  });
}

void Avx512AttentionValues(const float* p, int64_t p_stride, int heads, const float* v_rows,
                           int64_t stride, int n, int head_dim, float* o) {
  InHeadGroups(heads, [&](auto group, int i) {
    ValuesOfHeads<decltype(group)::value>(p + i * p_stride, p_stride, v_rows, stride, n, head_dim,
                                          o + int64_t{i} * head_dim);
  });
}

}  // namespace samebits::kernels::internal
