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

// s[j] = dot(q, k_j, head_dim) * scale for keys j in [0, n) at k_rows + j * stride.
template <float (*kDot)(const float*, const float*, int64_t)>
void AttentionScoresBy(const float* q, const float* k_rows, int64_t stride, int n, int head_dim,
                       float scale, float* s) {
  for (int j = 0; j < n; ++j) s[j] = kDot(q, k_rows + j * stride, head_dim) * scale;
}

// o[d] = fma(p[j], v_j[d], o[d]) for j = 0 .. n-1 in order, o from +0.0f.
template <void (*kAxpy)(float, const float*, float*, int64_t)>
void AttentionValuesBy(const float* p, const float* v_rows, int64_t stride, int n, int head_dim,
                       float* o) {
  for (int d = 0; d < head_dim; ++d) o[d] = 0.0f;
  for (int j = 0; j < n; ++j) kAxpy(p[j], v_rows + j * stride, o, head_dim);
}

}  // namespace
}  // namespace samebits::kernels::internal
