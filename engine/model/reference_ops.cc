#include "engine/model/reference_ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/numerics/int8_dot.h"
#include "engine/numerics/lanes.h"

namespace samebits::model::ref {

void MatVec(const kernels::KernelTable& kt, const TensorView& w, int64_t first_row, int64_t rows,
            int64_t cols, const float* x, float* y) {
  if (!w.present() || (first_row + rows) * cols > w.elements()) {
    throw std::logic_error("MatVec: rows [" + std::to_string(first_row) + ", " +
                           std::to_string(first_row + rows) + ") of width " + std::to_string(cols) +
                           " fall outside the weight tensor");
  }
  // Each output is one whole C1 dot product, whatever the table's ISA.
  if (!w.quantized) {
    kt.gemv(x, w.data, w.dtype, cols, first_row, first_row + rows, y);
    return;
  }
  if (kt.quant_dot == numerics::QuantDot::kInt8) {
    // The integer profile by its scalar definition (C12), whatever the ISA.
    numerics::Int8ActivationRow xq;
    xq.Quantize(w.quant_type, x, cols);
    const numerics::QuantLayout& l = numerics::LayoutOf(w.quant_type);
    const int64_t row_bytes = cols / l.block_elements * l.block_bytes;
    for (int64_t r = 0; r < rows; ++r) {
      y[r] = numerics::DotInt8(w.quant_type, w.data + (first_row + r) * row_bytes, xq.View(), cols);
    }
    return;
  }
  // A quantized matrix is read as the contract defines it: each row
  // dequantized by ggml's reference routine, then the F32 kernel. (The cpu
  // pass instead dequantizes inside the kernel, gemv_quant.)
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    w.ReadF32((first_row + r) * cols, cols, row.data());
    kt.gemv(x, row.data(), DType::kF32, cols, 0, 1, y + r);
  }
}

void RmsNorm(const kernels::KernelTable& kt, const float* x, const TensorView& w, int64_t w_offset,
             int n, float eps, float* y) {
  const float ss = kt.dot(x, x, n);
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) y[i] = (x[i] * r) * w.At(w_offset + i);
}

void LayerNorm(const kernels::KernelTable& kt, const float* x, const TensorView& w,
               const TensorView& b, int n, float eps, float* y) {
  const float mean = numerics::Sum(x, n) / static_cast<float>(n);
  std::vector<float> d(n);
  for (int i = 0; i < n; ++i) d[i] = x[i] - mean;
  const float var = kt.dot(d.data(), d.data(), n) / static_cast<float>(n);
  const float r = 1.0f / std::sqrt(var + eps);
  for (int i = 0; i < n; ++i) {
    y[i] = (d[i] * r) * w.At(i);
    if (b.present()) y[i] = y[i] + b.At(i);
  }
}

void Norm(const kernels::KernelTable& kt, NormKind kind, const float* x, const TensorView& w,
          const TensorView& b, int n, float eps, float* y) {
  if (kind == NormKind::kRmsNorm) {
    RmsNorm(kt, x, w, 0, n, eps, y);
  } else {
    LayerNorm(kt, x, w, b, n, eps, y);
  }
}

void Softmax(float* s, int n, const numerics::MathLibrary& math) {
  if (n <= 0) return;
  float m = s[0];
  for (int j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  for (int j = 0; j < n; ++j) s[j] = math.exp(s[j] - m);
  const float z = numerics::Sum(s, n);
  for (int j = 0; j < n; ++j) s[j] = s[j] / z;
}

void Rope(float* x, int rot_dim, RopeStyle style, float base, int pos,
          const numerics::MathLibrary& math, const TensorView& freq_factors) {
  const int half = rot_dim / 2;
  const float log_base = math.log(base);
  for (int i = 0; i < half; ++i) {
    float inv_freq =
        math.exp((static_cast<float>(-2 * i) / static_cast<float>(rot_dim)) * log_base);
    if (freq_factors.present()) inv_freq = inv_freq / freq_factors.At(i);
    const float angle = static_cast<float>(pos) * inv_freq;
    const float c = math.cos(angle), s = math.sin(angle);
    // Interleaved (GGUF llama) pairs (2i, 2i+1); NeoX pairs (i, i + half).
    const int i0 = style == RopeStyle::kInterleaved ? 2 * i : i;
    const int i1 = style == RopeStyle::kInterleaved ? 2 * i + 1 : i + half;
    const float x0 = x[i0], x1 = x[i1];
    // Two products, one addition each, no fma (C6).
    const float a0 = x0 * c, b0 = x1 * s;
    const float a1 = x0 * s, b1 = x1 * c;
    x[i0] = a0 - b0;
    x[i1] = a1 + b1;
  }
}

void SoftCap(float* x, int64_t n, float cap, const numerics::MathLibrary& math) {
  const float inv_cap = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) x[i] = numerics::SoftCap(math, x[i], cap, inv_cap);
}

std::vector<int> TopK(const float* p, int n, int k) {
  std::vector<int> chosen;
  std::vector<bool> taken(n, false);
  for (int rank = 0; rank < k && rank < n; ++rank) {
    int best = -1;
    // Strictly greater: on a tie the lower index, found first, stays.
    for (int e = 0; e < n; ++e) {
      if (!taken[e] && (best < 0 || p[e] > p[best])) best = e;
    }
    taken[best] = true;
    chosen.push_back(best);
  }
  return chosen;
}

void GatedActivation(Activation act, const float* g, const float* u, int n,
                     const numerics::MathLibrary& math, float* h) {
  if (act == Activation::kGeluTanh) {
    for (int i = 0; i < n; ++i) h[i] = numerics::GeluTanh(math, g[i]) * u[i];
  } else {
    for (int i = 0; i < n; ++i) h[i] = numerics::Silu(math, g[i]) * u[i];
  }
}

}  // namespace samebits::model::ref
