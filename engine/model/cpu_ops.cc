#include "engine/model/cpu_ops.h"

#include <cmath>

#include "engine/numerics/lanes.h"
#include "engine/numerics/softmax.h"

namespace samebits::model::cpu {

NormParams LoadNorm(const TensorView& w, const TensorView& b) {
  NormParams p;
  if (w.present()) {
    p.weight.resize(static_cast<size_t>(w.elements()));
    for (int64_t i = 0; i < w.elements(); ++i) p.weight[i] = w.At(i);
  }
  if (b.present()) {
    p.bias.resize(static_cast<size_t>(b.elements()));
    for (int64_t i = 0; i < b.elements(); ++i) p.bias[i] = b.At(i);
  }
  return p;
}

void NormRow(NormKind kind, const kernels::KernelTable& kt, const float* x, const NormParams& p,
             int n, float eps, float* y) {
  const float* w = p.weight.data();
  if (kind == NormKind::kRmsNorm) {
    const float ss = kt.dot(x, x, n);
    const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
    for (int i = 0; i < n; ++i) y[i] = (x[i] * r) * w[i];
    return;
  }
  // LayerNorm: the centred values are kept in `y` itself, then scaled in
  // place; each element sees the same operations as in reference_ops.cc.
  const float mean = numerics::Sum(x, n) / static_cast<float>(n);
  for (int i = 0; i < n; ++i) y[i] = x[i] - mean;
  const float var = kt.dot(y, y, n) / static_cast<float>(n);
  const float r = 1.0f / std::sqrt(var + eps);
  for (int i = 0; i < n; ++i) y[i] = (y[i] * r) * w[i];
  if (!p.bias.empty()) {
    for (int i = 0; i < n; ++i) y[i] = y[i] + p.bias[i];
  }
}

void RmsNormInPlace(const kernels::KernelTable& kt, float* x, const float* w, int n, float eps) {
  const float ss = kt.dot(x, x, n);
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) x[i] = (x[i] * r) * w[i];
}

RopeTable::RopeTable(int rot_dim, RopeStyle style, float base, const numerics::MathLibrary& math,
                     std::span<const float> freq_factors)
    : half_(rot_dim / 2), style_(style), inv_freq_(rot_dim / 2) {
  const float log_base = math.log(base);
  for (int i = 0; i < half_; ++i) {
    inv_freq_[i] = math.exp((static_cast<float>(-2 * i) / static_cast<float>(rot_dim)) * log_base);
    if (!freq_factors.empty()) inv_freq_[i] = inv_freq_[i] / freq_factors[i];
  }
}

void RopeTable::Fill(int first_pos, int n, const numerics::MathLibrary& math, float* cos_out,
                     float* sin_out) const {
  for (int t = 0; t < n; ++t) {
    const float pos = static_cast<float>(first_pos + t);
    for (int i = 0; i < half_; ++i) {
      const float angle = pos * inv_freq_[i];
      cos_out[t * half_ + i] = math.cos(angle);
      sin_out[t * half_ + i] = math.sin(angle);
    }
  }
}

void RopeTable::Apply(float* x, const float* c, const float* s) const {
  const bool interleaved = style_ == RopeStyle::kInterleaved;
  for (int i = 0; i < half_; ++i) {
    const int i0 = interleaved ? 2 * i : i;
    const int i1 = interleaved ? 2 * i + 1 : i + half_;
    const float x0 = x[i0], x1 = x[i1];
    // Two products and one addition each, never an fma (C6).
    const float a0 = x0 * c[i], b0 = x1 * s[i];
    const float a1 = x0 * s[i], b1 = x1 * c[i];
    x[i0] = a0 - b0;
    x[i1] = a1 + b1;
  }
}

void ExpInPlace(float* x, int64_t n, const numerics::MathLibrary& math,
                const kernels::KernelTable* kt) {
  if (kt != nullptr && math.profile == numerics::MathProfile::kPortable) {
    kt->exp_portable(x, n);  // PortableExp's bits, many at once
    return;
  }
  float (*const exp_fn)(float) = math.exp;
  for (int64_t i = 0; i < n; ++i) x[i] = exp_fn(x[i]);
}

void SoftmaxInPlace(float* s, int n, const numerics::MathLibrary& math,
                    const kernels::KernelTable* kt) {
  if (kt != nullptr && math.profile == numerics::MathProfile::kPortable) {
    kt->softmax_portable(s, n);  // the same steps, many at once
    return;
  }
  numerics::SoftmaxWith(s, n, [&](float* x, int64_t k) { ExpInPlace(x, k, math, kt); });
}

void TopK(const float* p, int n, int k, int* out) {
  for (int rank = 0; rank < k && rank < n; ++rank) {
    int best = -1;
    for (int e = 0; e < n; ++e) {
      bool taken = false;
      for (int r = 0; r < rank; ++r) taken = taken || out[r] == e;
      // Strictly greater: on a tie the lower index, met first, stays.
      if (!taken && (best < 0 || p[e] > p[best])) best = e;
    }
    out[rank] = best;
  }
}

void SoftCapInPlace(float* x, int64_t n, float cap, float inv_cap,
                    const numerics::MathLibrary& math) {
  for (int64_t i = 0; i < n; ++i) x[i] = numerics::SoftCap(math, x[i], cap, inv_cap);
}

void AttentionRow(const kernels::KernelTable& kt, const numerics::MathLibrary& math, const float* q,
                  int heads, const float* k_rows, const float* v_rows, int64_t stride, int first,
                  int last, int head_dim, float scale, float softcap, float inv_softcap,
                  float* scores, float* o) {
  const int n = last - first + 1;
  kt.attention_scores(q, heads, k_rows + first * stride, stride, n, head_dim, scale, scores, n);
  for (int i = 0; i < heads; ++i) {
    float* s = scores + static_cast<ptrdiff_t>(i) * n;
    if (softcap > 0.0f) SoftCapInPlace(s, n, softcap, inv_softcap, math);
    SoftmaxInPlace(s, n, math, &kt);
  }
  kt.attention_values(scores, n, heads, v_rows + first * stride, stride, n, head_dim, o);
}

}  // namespace samebits::model::cpu
