// The reference forward pass: the numeric contract written for clarity
// (engine/numerics/README.md). It reads like the paper: one token row at a
// time, a straight list of named steps, shapes in comments. Because every
// row is computed on its own, feeding a prompt whole, token by token or in
// chunks gives the same bits by construction; the fast pass must match it.
//
// Trace records, one per token row (`Record(layer, op, position, ...)`):
//   layer -1 "embed"          (d_model)  the embedding row (times embedding_scale)
//   "attn_norm"               (d_model)  norm(x)
//   "q"                       (n_heads * head_dim)    after bias, q-norm and RoPE
//   "k", "v"                  (n_kv_heads * head_dim) after bias, k-norm and RoPE
//   "attn"                    (n_heads * head_dim)    attention, before W_o
//   "attn_out"                (d_model)  W_o attn (then its post-norm, with post_norms)
//   "attn_residual"           (d_model)  x + attn_out
//   "ffn_norm"                (d_model)  norm(x); absent in parallel blocks
//   "router"                  (n_experts) router probabilities; MoE only
//   "ffn"                     (d_model)  FFN output (experts + shared; then its post-norm)
//   "ffn_residual"            (d_model)  the layer's output
//   layer -1 "output_norm"    (d_model), "logits" (vocab_size): output rows only; the
//                                       logits after the logit scale and the final soft-cap
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/forward.h"
#include "engine/model/reference_ops.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/lanes.h"

namespace samebits::model {
namespace {

using Vec = std::vector<float>;

class ReferenceForward final : public Forward {
 public:
  ReferenceForward(const ModelWeights& w, const numerics::MathLibrary& math,
                   const kernels::KernelTable& kt)
      : w_(w), c_(w.config), math_(math), kt_(kt) {
    std::vector<std::string> problems = c_.Validate();
    if (problems.empty()) problems = CheckWeights(w_);
    if (!problems.empty()) {
      std::string all = problems.front();
      for (size_t i = 1; i < problems.size(); ++i) all += "\n" + problems[i];
      throw std::invalid_argument(all);
    }
  }

  // The contract for a batch: the calls one after another, each alone.
  void RunBatch(std::span<const SequenceCall> calls) override {
    CheckBatchInputs(w_, calls);
    for (const SequenceCall& call : calls) {
      RunOne(*call.state, call.tokens, call.all_positions, *call.logits, call.trace);
    }
  }

 private:
  void RunOne(InferenceState& state, std::span<const int32_t> tokens, bool all_positions,
              Vec& logits, TraceSink* trace) const {
    const int n = static_cast<int>(tokens.size());
    logits.assign(static_cast<size_t>(all_positions ? n : (n > 0 ? 1 : 0)) * c_.vocab_size, 0.0f);
    for (int t = 0; t < n; ++t) {
      const bool output = all_positions || t == n - 1;
      float* out = output
                       ? logits.data() + static_cast<size_t>(all_positions ? t : 0) * c_.vocab_size
                       : nullptr;
      Row(state, tokens[t], state.n_past, out, trace);
      state.n_past += 1;
    }
  }

  void Record(TraceSink* trace, int layer, const char* op, int pos, const Vec& v) const {
    if (trace != nullptr) trace->Record(layer, op, pos, v.data(), static_cast<int64_t>(v.size()));
  }

  // One token at position `pos`: embedding, layers, and (when `out` is not
  // null) the head. Appends this position's K and V to every layer's cache.
  void Row(InferenceState& state, int32_t token, int pos, float* out, TraceSink* trace) const {
    const int d = c_.d_model;

    // Embedding: x = E[token]                                  (d_model)
    Vec x(d);
    w_.token_embedding.ReadF32(int64_t{token} * d, d, x.data());
    // Scaled embedding (Gemma): x = x * embedding_scale
    if (c_.embedding_scale != 1.0f) {
      for (float& v : x) v = v * c_.embedding_scale;
    }
    Record(trace, -1, "embed", pos, x);

    for (int l = 0; l < c_.n_layers(); ++l) Layer(state, l, pos, x, trace);

    if (out == nullptr) return;
    // Output norm                                              (d_model)
    Vec xn(d);
    ref::Norm(kt_, c_.norm, x.data(), w_.output_norm, w_.output_norm_bias, d, c_.norm_eps,
              xn.data());
    Record(trace, -1, "output_norm", pos, xn);
    // Logits = W_out xn, then the logit scale                  (vocab_size)
    Vec logits(c_.vocab_size);
    ref::MatVec(kt_, w_.output_projection(), 0, c_.vocab_size, d, xn.data(), logits.data());
    if (c_.logit_scale != 1.0f) {
      for (float& v : logits) v = v * c_.logit_scale;
    }
    // Final soft-cap (Gemma 2): logits = tanh(logits / cap) * cap
    if (c_.final_softcap > 0.0f)
      ref::SoftCap(logits.data(), c_.vocab_size, c_.final_softcap, math_);
    Record(trace, -1, "logits", pos, logits);
    std::copy(logits.begin(), logits.end(), out);
  }

  void Layer(InferenceState& state, int l, int pos, Vec& x, TraceSink* trace) const {
    const LayerWeights& lw = w_.layers[l];
    const LayerConfig& lc = c_.layers[l];
    const int d = c_.d_model, hd = c_.head_dim;
    const int q_dim = c_.n_heads * hd, kv_dim = c_.n_kv_heads * hd;

    // Attention norm: xn = norm(x)                             (d_model)
    Vec xn(d);
    ref::Norm(kt_, c_.norm, x.data(), lw.attn_norm, lw.attn_norm_bias, d, c_.norm_eps, xn.data());
    Record(trace, l, "attn_norm", pos, xn);

    // Projections: q = Wq xn, k = Wk xn, v = Wv xn             (q_dim), (kv_dim), (kv_dim)
    Vec q(q_dim), k(kv_dim), v(kv_dim);
    ref::MatVec(kt_, lw.wq, 0, q_dim, d, xn.data(), q.data());
    ref::MatVec(kt_, lw.wk, 0, kv_dim, d, xn.data(), k.data());
    ref::MatVec(kt_, lw.wv, 0, kv_dim, d, xn.data(), v.data());

    // Biases (Qwen2): q = q + b_q, k = k + b_k, v = v + b_v
    if (c_.qkv_bias) {
      for (int i = 0; i < q_dim; ++i) q[i] = q[i] + lw.q_bias.At(i);
      for (int i = 0; i < kv_dim; ++i) k[i] = k[i] + lw.k_bias.At(i);
      for (int i = 0; i < kv_dim; ++i) v[i] = v[i] + lw.v_bias.At(i);
    }

    // q/k norm per head, then RoPE on each head of q and k
    QkNormRope(lw, l, pos, q, k);
    Record(trace, l, "q", pos, q);
    Record(trace, l, "k", pos, k);
    Record(trace, l, "v", pos, v);

    // KV cache: append this position                          (n_past + 1, kv_dim)
    state.k_cache[l].insert(state.k_cache[l].end(), k.begin(), k.end());
    state.v_cache[l].insert(state.v_cache[l].end(), v.begin(), v.end());

    // Attention per head, GQA: head h reads kv head h / group   (q_dim)
    Vec attn(q_dim, 0.0f);
    Attention(state, l, lc.sliding_window, pos, q, attn);
    Record(trace, l, "attn", pos, attn);

    // Output projection: attn_out = Wo attn                    (d_model)
    Vec attn_out(d);
    ref::MatVec(kt_, lw.wo, 0, d, q_dim, attn.data(), attn_out.data());
    // Post-attention norm (Gemma 2/3): attn_out = norm(attn_out)
    if (c_.post_norms) PostNorm(lw.post_attn_norm, attn_out);
    Record(trace, l, "attn_out", pos, attn_out);

    // Residual: x = x + attn_out
    for (int i = 0; i < d; ++i) x[i] = x[i] + attn_out[i];
    Record(trace, l, "attn_residual", pos, x);

    // FFN input: the same norm output in a parallel block, else norm(x)
    Vec fn(d);
    if (c_.parallel_block) {
      fn = xn;
    } else {
      ref::Norm(kt_, c_.norm, x.data(), lw.ffn_norm, lw.ffn_norm_bias, d, c_.norm_eps, fn.data());
      Record(trace, l, "ffn_norm", pos, fn);
    }

    // FFN: a mixture of experts or the dense SwiGLU            (d_model)
    Vec ffn(d, 0.0f);
    if (lc.moe) {
      MixtureOfExperts(lw, l, pos, fn, ffn, trace);
    } else {
      SwiGluFfn(lw.ffn_gate, lw.ffn_up, lw.ffn_down, 0, c_.ffn_dim, fn, ffn);
    }
    // Post-FFN norm (Gemma 2/3): ffn = norm(ffn)
    if (c_.post_norms) PostNorm(lw.post_ffn_norm, ffn);
    Record(trace, l, "ffn", pos, ffn);

    // Residual: x = x + ffn (after the attention residual, also in parallel blocks)
    for (int i = 0; i < d; ++i) x[i] = x[i] + ffn[i];
    Record(trace, l, "ffn_residual", pos, x);
  }

  // The norm of a branch's output (post_norms): v = norm(v) with `w`.
  void PostNorm(const TensorView& w, Vec& v) const {
    Vec tmp(v.size());
    ref::Norm(kt_, c_.norm, v.data(), w, TensorView{}, c_.d_model, c_.norm_eps, tmp.data());
    v = tmp;
  }

  // q/k norm (RMSNorm of each head over head_dim, before RoPE), then RoPE
  // on each head of q and k at `pos` (skipped on no-RoPE global layers),
  // with layer `l`'s base and the model's frequency factors.
  void QkNormRope(const LayerWeights& lw, int l, int pos, Vec& q, Vec& k) const {
    const LayerConfig& lc = c_.layers[l];
    const int hd = c_.head_dim;
    // q/k norm: RMSNorm per head over head_dim, before RoPE
    if (c_.qk_norm) {
      Vec tmp(hd);
      for (int h = 0; h < c_.n_heads; ++h) {
        ref::RmsNorm(kt_, q.data() + h * hd, lw.q_norm, 0, hd, c_.norm_eps, tmp.data());
        std::copy(tmp.begin(), tmp.end(), q.begin() + h * hd);
      }
      for (int h = 0; h < c_.n_kv_heads; ++h) {
        ref::RmsNorm(kt_, k.data() + h * hd, lw.k_norm, 0, hd, c_.norm_eps, tmp.data());
        std::copy(tmp.begin(), tmp.end(), k.begin() + h * hd);
      }
    }

    // RoPE on each head of q and k (skipped on no-RoPE global layers)
    if (lc.use_rope) {
      const float base = c_.layer_rope_base(l);
      for (int h = 0; h < c_.n_heads; ++h) {
        ref::Rope(q.data() + h * hd, c_.rotary_dim(), c_.rope_style, base, pos, math_,
                  w_.rope_freqs);
      }
      for (int h = 0; h < c_.n_kv_heads; ++h) {
        ref::Rope(k.data() + h * hd, c_.rotary_dim(), c_.rope_style, base, pos, math_,
                  w_.rope_freqs);
      }
    }
  }

  // C5: causal, windowed attention of one query row over the cache.
  void Attention(const InferenceState& state, int l, int window, int pos, const Vec& q,
                 Vec& attn) const {
    const int hd = c_.head_dim, kv_dim = c_.n_kv_heads * hd;
    const int group = c_.n_heads / c_.n_kv_heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    // Visible keys: j <= pos and, with a window, pos - j < window.
    const int first = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
    const int n_keys = pos - first + 1;
    const float* kc = state.k_cache[l].data();
    const float* vc = state.v_cache[l].data();
    Vec s(n_keys);
    for (int h = 0; h < c_.n_heads; ++h) {
      const int kvh = h / group;
      const float* qh = q.data() + h * hd;
      // Scores: s[j] = dot(q, k_j) * scale                      (n_keys)
      for (int j = 0; j < n_keys; ++j) {
        s[j] = kt_.dot(qh, kc + static_cast<size_t>(first + j) * kv_dim + kvh * hd, hd) * scale;
      }
      // Soft-cap (Gemma 2): s = tanh(s / cap) * cap
      if (c_.attn_softcap > 0.0f) ref::SoftCap(s.data(), n_keys, c_.attn_softcap, math_);
      // p = softmax(s)
      ref::Softmax(s.data(), n_keys, math_);
      // o = sum_j p[j] v_j, key by key, one fma chain per element  (head_dim)
      float* o = attn.data() + h * hd;
      for (int j = 0; j < n_keys; ++j) {
        const float* vj = vc + static_cast<size_t>(first + j) * kv_dim + kvh * hd;
        for (int e = 0; e < hd; ++e) o[e] = std::fma(s[j], vj[e], o[e]);
      }
    }
  }

  // C7: router softmax, top-k, optional renormalisation, rank-ordered
  // combine, then the shared expert.
  void MixtureOfExperts(const LayerWeights& lw, int l, int pos, const Vec& x, Vec& out,
                        TraceSink* trace) const {
    const int d = c_.d_model, ne = c_.n_experts, f = c_.expert_ffn_dim;
    // Router probabilities: p = softmax(W_router x)           (n_experts)
    Vec p(ne);
    ref::MatVec(kt_, lw.router, 0, ne, d, x.data(), p.data());
    ref::Softmax(p.data(), ne, math_);
    Record(trace, l, "router", pos, p);

    // Top-k experts by descending p, ties to the lower index   (top_k)
    const std::vector<int> chosen = ref::TopK(p.data(), ne, c_.top_k);
    Vec weight(chosen.size());
    for (size_t r = 0; r < chosen.size(); ++r) weight[r] = p[chosen[r]];
    if (c_.renormalize_top_k) {
      const float z = numerics::Sum(weight.data(), weight.size());
      for (float& wr : weight) wr = wr / z;
    }

    // Combine in rank order: out = fma(w_r, y_r, out)          (d_model)
    Vec y(d);
    for (size_t r = 0; r < chosen.size(); ++r) {
      const int e = chosen[r];
      SwiGluFfn(lw.expert_gate, lw.expert_up, lw.expert_down, e, f, x, y);
      for (int i = 0; i < d; ++i) out[i] = std::fma(weight[r], y[i], out[i]);
    }

    // Shared expert: out = out + y_shared
    if (c_.shared_expert_ffn_dim > 0) {
      SwiGluFfn(lw.shared_gate, lw.shared_up, lw.shared_down, 0, c_.shared_expert_ffn_dim, x, y);
      for (int i = 0; i < d; ++i) out[i] = out[i] + y[i];
    }
  }

  // Gated FFN number `e` of a stack (0 for a plain matrix), SwiGLU or GeGLU:
  // y = W_down (act(W_gate x) * (W_up x))                     (d_model)
  void SwiGluFfn(const TensorView& gate, const TensorView& up, const TensorView& down, int e, int f,
                 const Vec& x, Vec& y) const {
    const int d = c_.d_model;
    Vec g(f), u(f), h(f);
    ref::MatVec(kt_, gate, int64_t{e} * f, f, d, x.data(), g.data());             // (f)
    ref::MatVec(kt_, up, int64_t{e} * f, f, d, x.data(), u.data());               // (f)
    ref::GatedActivation(c_.activation, g.data(), u.data(), f, math_, h.data());  // (f)
    ref::MatVec(kt_, down, int64_t{e} * d, d, f, h.data(), y.data());             // (d_model)
  }

  const ModelWeights& w_;
  const ModelConfig& c_;
  const numerics::MathLibrary& math_;
  const kernels::KernelTable& kt_;  // dot products only (C1): any ISA, the same bits
};

}  // namespace

std::unique_ptr<Forward> MakeReferenceForward(const ModelWeights& weights,
                                              const numerics::MathLibrary& math, kernels::Isa isa,
                                              numerics::QuantDot quant_dot) {
  return std::make_unique<ReferenceForward>(weights, math, kernels::GetKernelTable(isa, quant_dot));
}

}  // namespace samebits::model
