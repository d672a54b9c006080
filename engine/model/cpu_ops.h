// Row-level operations of the cpu forward pass (forward_cpu.cc): norms,
// RoPE from a per-call angle table, softmax, top-k and one attention row.
// Each reproduces the contract's order (engine/numerics/README.md) exactly as
// reference_ops.cc writes it, but works on preallocated buffers and goes
// through the kernel table for its dot products, so it allocates nothing and
// runs at SIMD speed. None of them reads a clock or a global.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/config.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::model::cpu {

// A norm's weight and optional bias, converted once to f32 (exactly).
struct NormParams {
  std::vector<float> weight;
  std::vector<float> bias;  // empty: no bias
};

// Returns `w` (and `b` when present) as f32 vectors.
NormParams LoadNorm(const TensorView& w, const TensorView& b);

// C3: RMSNorm or LayerNorm of `x` (n) into `y` (which may not alias `x`).
void NormRow(NormKind kind, const kernels::KernelTable& kt, const float* x, const NormParams& p,
             int n, float eps, float* y);

// C3: RMSNorm of one head in place (q/k norm).
void RmsNormInPlace(const kernels::KernelTable& kt, float* x, const float* w, int n, float eps);

// C6: the rotary angles of one call, computed once per position.
class RopeTable {
 public:
  RopeTable() = default;
  // Precomputes inv_freq[i] for `rot_dim` as reference_ops.cc does,
  // divided by `freq_factors[i]` when they are given (rot_dim / 2).
  RopeTable(int rot_dim, RopeStyle style, float base, const numerics::MathLibrary& math,
            std::span<const float> freq_factors = {});

  // Fills cos/sin for positions `first_pos .. first_pos + n - 1` into the
  // caller's buffers (`n * rot_dim / 2` each).
  void Fill(int first_pos, int n, const numerics::MathLibrary& math, float* cos_out,
            float* sin_out) const;

  // Rotates one head `x` with the angles of one position (`c`, `s`: rot_dim / 2).
  void Apply(float* x, const float* c, const float* s) const;

  // Returns rot_dim / 2.
  int half() const { return half_; }

 private:
  int half_ = 0;
  RopeStyle style_ = RopeStyle::kNeox;
  std::vector<float> inv_freq_;
};

// x[i] = math.exp(x[i]) for i in [0, n). Under the portable profile, with
// a kernel table, through the table's exp_portable (many at once, the same
// bits); otherwise one at a time. The one place that makes this choice.
void ExpInPlace(float* x, int64_t n, const numerics::MathLibrary& math,
                const kernels::KernelTable* kt);

// C4: softmax of `s` (n) in place with the library's exp: in the portable
// profile with `kt` given, the table's softmax_portable (the same bits, many
// lanes at once); otherwise step by step, the exp by ExpInPlace.
void SoftmaxInPlace(float* s, int n, const numerics::MathLibrary& math,
                    const kernels::KernelTable* kt = nullptr);

// C7: writes the indices of the `k` largest of `p` (n) in rank order
// (descending p, ties to the lower index) to `out` (k).
void TopK(const float* p, int n, int k, int* out);

// C3: x[i] = tanh(x[i] * inv_cap) * cap for i in [0, n) (soft-capping).
void SoftCapInPlace(float* x, int64_t n, float cap, float inv_cap,
                    const numerics::MathLibrary& math);

// C5: one query row of `heads` query heads that share one K/V head (GQA):
// per head, the table's scores, the soft-cap when `softcap` > 0
// (`inv_softcap` = 1 / softcap), the softmax (C4), the table's key-by-key
// weighted sum of V. Keys `first .. last` (inclusive) are visible; `k_rows`
// / `v_rows` point at key 0 of the K/V head and advance by `stride` floats
// per position. Head i's query is q + i * head_dim and its output (head_dim
// floats) o + i * head_dim. `scores` is scratch of at least
// heads * (last - first + 1) floats. Each head's bits are those of a call
// for it alone.
void AttentionRow(const kernels::KernelTable& kt, const numerics::MathLibrary& math, const float* q,
                  int heads, const float* k_rows, const float* v_rows, int64_t stride, int first,
                  int last, int head_dim, float scale, float softcap, float inv_softcap,
                  float* scores, float* o);

}  // namespace samebits::model::cpu
