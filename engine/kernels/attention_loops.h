// The two halves of an attention row (C5) written once over an ISA's own
// dot and axpy, for every table without a dedicated attention kernel
// (scalar, AVX2, NEON). Scores are whole C1 dot products; the weighted sum
// of V is one fma chain per output element, key by key in increasing order.
//
// Internal header: include it only from a kernel table's own file. The
// templates sit in an anonymous namespace and are instantiated with that
// file's own (anonymous-namespace) functions, so each object file keeps a
// private copy compiled with its own -m flags (README.md).
#pragma once

#include <cstdint>

namespace samebits::kernels::internal {
namespace {

// s[i * s_stride + j] = dot(q_i, k_j, head_dim) * scale for each of the
// `heads` query heads i (q_i at q + i * head_dim) and keys j in [0, n) at
// k_rows + j * stride.
template <float (*kDot)(const float*, const float*, int64_t)>
void AttentionScoresBy(const float* q, int heads, const float* k_rows, int64_t stride, int n,
                       int head_dim, float scale, float* s, int64_t s_stride) {
  for (int i = 0; i < heads; ++i) {
    const float* q_i = q + int64_t{i} * head_dim;
    float* s_i = s + i * s_stride;
    for (int j = 0; j < n; ++j) s_i[j] = kDot(q_i, k_rows + j * stride, head_dim) * scale;
  }
}

// o_i[d] = fma(p_i[j], v_j[d], o_i[d]) for j = 0 .. n-1 in order, o_i from
// +0.0f, for each head i (p_i at p + i * p_stride, o_i at o + i * head_dim).
template <void (*kAxpy)(float, const float*, float*, int64_t)>
void AttentionValuesBy(const float* p, int64_t p_stride, int heads, const float* v_rows,
                       int64_t stride, int n, int head_dim, float* o) {
  for (int i = 0; i < heads; ++i) {
    const float* p_i = p + i * p_stride;
    float* o_i = o + int64_t{i} * head_dim;
    for (int d = 0; d < head_dim; ++d) o_i[d] = 0.0f;
    for (int j = 0; j < n; ++j) kAxpy(p_i[j], v_rows + j * stride, o_i, head_dim);
  }
}

}  // namespace
}  // namespace samebits::kernels::internal
