// The contract's model-level operations (engine/numerics/README.md, C2-C7),
// each written once in plain scalar code. Dot products (C1) go through the
// kernel table `kt` that `--isa` chose; every table gives the same bits, and
// the scalar one is `numerics::Dot` itself. The reference forward pass is a
// list of calls to these; a fast path may call them too where speed does
// not matter, or must reproduce them bit for bit where it does.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/config.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::model::ref {

// C2: y[r] = dot(x, W[first_row + r, :], cols) for r in [0, rows), where
// `w` is a row-major matrix (or a stack of them) of any dtype with rows of
// `cols` elements. Throws std::logic_error when the rows fall outside `w`.
void MatVec(const kernels::KernelTable& kt, const TensorView& w, int64_t first_row, int64_t rows,
            int64_t cols, const float* x, float* y);

// C3: RMSNorm of `x` (n) into `y` with weight `w`.
void RmsNorm(const kernels::KernelTable& kt, const float* x, const TensorView& w, int64_t w_offset,
             int n, float eps, float* y);

// C3: LayerNorm of `x` (n) into `y` with weight `w` and optional bias `b`
// (an absent bias adds nothing).
void LayerNorm(const kernels::KernelTable& kt, const float* x, const TensorView& w,
               const TensorView& b, int n, float eps, float* y);

// C3: RMSNorm or LayerNorm as `kind` says.
void Norm(const kernels::KernelTable& kt, NormKind kind, const float* x, const TensorView& w,
          const TensorView& b, int n, float eps, float* y);

// C4: softmax of s (n) in place.
void Softmax(float* s, int n, const numerics::MathLibrary& math);

// C6: rotates the first `rot_dim` dimensions of one head `x` (head_dim)
// for position `pos`. With `freq_factors` (rot_dim / 2, Llama 3.1's
// `rope_freqs`), each inverse frequency is divided by its factor.
void Rope(float* x, int rot_dim, RopeStyle style, float base, int pos,
          const numerics::MathLibrary& math, const TensorView& freq_factors);

// C3: x[i] = tanh(x[i] * (1 / cap)) * cap for i in [0, n) (soft-capping).
void SoftCap(float* x, int64_t n, float cap, const numerics::MathLibrary& math);

// C7: Returns the indices of the `k` largest `p`, in rank order (descending
// p, ties to the lower index).
std::vector<int> TopK(const float* p, int n, int k);

// C3: h[i] = act(g[i]) * u[i], act SiLU (SwiGLU) or GELU-tanh (GeGLU).
void GatedActivation(Activation act, const float* g, const float* u, int n,
                     const numerics::MathLibrary& math, float* h);

}  // namespace samebits::model::ref
