// The fast forward pass: the same numbers as forward_reference.cc, bit for
// bit, in every configuration (threads, chunk and tile sizes, ISA, batch
// split), because every output element is computed whole by one unit of
// work in the contract's order (engine/numerics/README.md, C1-C7). Threads
// split outputs (weight rows, tiles, heads, experts), never a reduction.
//
// Decode (one token) cuts each projection into row chunks of about
// `gemv_chunk_bytes` and runs as few dispatches per layer as the data
// dependencies allow:
//   sequential block: [q|k|v] -> [attention heads] -> [o_proj] -> router
//                     (inline) -> [experts' gate/up + shared gate/up] ->
//                     [experts' down + shared down]           (5 dispatches)
//   parallel block:   [q|k|v + router or FFN gate/up] -> [attention heads +
//                     experts' gate/up] -> [o_proj + FFN down] (3 dispatches)
// Norms, q/k norm, RoPE (angles computed once per position), the KV append,
// softmax/top-k and the combines run on the calling thread between them.
// Attention rows use the ISA's row kernel (cpu_attention.h).
//
// Prefill and extend (several tokens) run GEMM tiles, attention per (head,
// block of query rows), and the experts in parallel with the tokens grouped
// by expert; each token's expert outputs are then combined in rank order
// exactly as the reference does.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/cpu_attention.h"
#include "engine/model/cpu_ops.h"
#include "engine/model/cpu_work.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"

namespace samebits::model {
namespace {

using cpu::Matrix;
using cpu::MatTask;

// Grows `v` to at least `n` elements; buffers keep the largest size seen, so
// steady decoding allocates nothing.
template <typename T>
void Grow(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
}

// Converts `n` elements of `t` from element `offset` on to f32 (exactly).
void ConvertRow(const TensorView& t, int64_t offset, int n, float* out) {
  switch (t.dtype) {
    case DType::kF32: {
      const float* p = reinterpret_cast<const float*>(t.data) + offset;
      std::memcpy(out, p, sizeof(float) * n);
      return;
    }
    case DType::kF16: {
      const auto* p = reinterpret_cast<const numerics::F16*>(t.data) + offset;
      for (int i = 0; i < n; ++i) out[i] = numerics::ToFloat(p[i]);
      return;
    }
    case DType::kBF16: {
      const auto* p = reinterpret_cast<const numerics::BF16*>(t.data) + offset;
      for (int i = 0; i < n; ++i) out[i] = numerics::ToFloat(p[i]);
      return;
    }
  }
}

// The matrices and norm weights of one layer, resolved once.
struct LayerParams {
  Matrix wq, wk, wv, wo;
  Matrix ffn_gate, ffn_up, ffn_down;
  Matrix router;
  std::vector<Matrix> gate, up, down;  // per expert
  Matrix shared_gate, shared_up, shared_down;
  cpu::NormParams attn_norm, ffn_norm;
  std::vector<float> q_norm, k_norm;
};

// A trace record held until the end of a call, so that the records leave in
// the reference's order (by position, then layer and op) whatever the
// batching.
struct PendingRecord {
  int layer;
  const char* op;
  int position;
  std::vector<float> data;
};

class CpuForward final : public Forward {
 public:
  CpuForward(const ModelWeights& w, const numerics::MathLibrary& math, threads::ThreadPool& pool,
             const CpuOptions& options, bool break_identity_for_tests)
      : w_(w),
        c_(w.config),
        math_(math),
        pool_(pool),
        kt_(kernels::GetKernelTable(options.isa)),
        attention_row_(cpu::AttentionRowFor(options.isa)),
        break_identity_(break_identity_for_tests) {
    const auto problems = c_.Validate();
    if (!problems.empty()) throw std::invalid_argument(problems.front());
    if (static_cast<int>(w_.layers.size()) != c_.n_layers()) {
      throw std::invalid_argument(c_.name + ": weights have " + std::to_string(w_.layers.size()) +
                                  " layers but the config has " + std::to_string(c_.n_layers()));
    }
    cut_.gemv_chunk_bytes = std::max<int64_t>(1, options.gemv_chunk_bytes);
    cut_.gemm_tile_m = std::max(1, options.gemm_tile_m);
    cut_.gemm_tile_n = std::max(1, options.gemm_tile_n);
    row_block_ = std::max(1, options.attention_row_block);
    if (options.profile) profiler_ = std::make_unique<Profiler>();

    d_ = c_.d_model;
    hd_ = c_.head_dim;
    q_dim_ = c_.n_heads * hd_;
    kv_dim_ = c_.n_kv_heads * hd_;
    group_ = c_.n_heads / c_.n_kv_heads;
    top_k_ = c_.top_k;
    scale_ = 1.0f / std::sqrt(static_cast<float>(hd_));
    for (const LayerConfig& lc : c_.layers) {
      any_rope_ = any_rope_ || lc.use_rope;
      any_moe_ = any_moe_ || lc.moe;
    }
    if (any_rope_) rope_ = cpu::RopeTable(c_.rotary_dim(), c_.rope_style, c_.rope_base, math_);
    LoadParams();
    scores_.resize(static_cast<size_t>(pool_.size()) * static_cast<size_t>(c_.max_seq_len));
  }

  void Run(InferenceState& state, std::span<const int32_t> tokens, bool all_positions,
           std::vector<float>& logits, TraceSink* trace) override {
    CheckRunInputs(w_, state, tokens);
    const int n = static_cast<int>(tokens.size());
    const int V = c_.vocab_size;
    logits.resize(static_cast<size_t>(all_positions ? n : (n > 0 ? 1 : 0)) * V);
    if (n == 0) return;
    const int n_past = state.n_past;
    kind_ = n_past == 0 ? PassKind::kPrefill : (n == 1 ? PassKind::kDecode : PassKind::kExtend);
    if (profiler_) profiler_->CountPass(kind_, n);
    trace_ = trace;
    pending_.clear();
    tasks_.clear();  // nothing left over from a call that threw
    EnsureBatch(n);
    GrowCaches(state, n_past + n);

    {
      ProfileScope scope(profiler_.get(), kind_, ProfileOp::kEmbed);
      // Embedding: x[t] = E[token t]                              (n, d_model)
      for (int t = 0; t < n; ++t) {
        ConvertRow(w_.token_embedding, int64_t{tokens[t]} * d_, d_, x_.data() + t * d_);
      }
      // RoPE angles, once per position of this call.          (n, rot_dim / 2)
      if (any_rope_) rope_.Fill(n_past, n, math_, cos_.data(), sin_.data());
    }
    TraceRows(-1, "embed", n_past, n, x_.data(), d_, d_);

    for (int l = 0; l < c_.n_layers(); ++l) {
      if (n == 1) {
        DecodeLayer(state, l, n_past);
      } else {
        BatchLayer(state, l, n_past, n);
      }
    }
    Head(n_past, n, all_positions, logits);
    state.n_past += n;
    FlushTrace();
  }

  std::string ProfileReport() const override {
    return profiler_ ? profiler_->Report() : std::string();
  }

 private:
  void LoadParams() {
    const int d = d_, f = c_.expert_ffn_dim, sf = c_.shared_expert_ffn_dim;
    params_.resize(c_.n_layers());
    for (int l = 0; l < c_.n_layers(); ++l) {
      const LayerWeights& lw = w_.layers[l];
      const LayerConfig& lc = c_.layers[l];
      LayerParams& p = params_[l];
      p.wq = cpu::MatrixOf(lw.wq, q_dim_, d, "attn_q");
      p.wk = cpu::MatrixOf(lw.wk, kv_dim_, d, "attn_k");
      p.wv = cpu::MatrixOf(lw.wv, kv_dim_, d, "attn_v");
      p.wo = cpu::MatrixOf(lw.wo, d, q_dim_, "attn_output");
      p.attn_norm = cpu::LoadNorm(lw.attn_norm, lw.attn_norm_bias);
      if (!c_.parallel_block) p.ffn_norm = cpu::LoadNorm(lw.ffn_norm, lw.ffn_norm_bias);
      if (c_.qk_norm) {
        p.q_norm = cpu::LoadNorm(lw.q_norm, TensorView{}).weight;
        p.k_norm = cpu::LoadNorm(lw.k_norm, TensorView{}).weight;
      }
      if (lc.moe) {
        p.router = cpu::MatrixOf(lw.router, c_.n_experts, d, "ffn_gate_inp");
        for (int e = 0; e < c_.n_experts; ++e) {
          p.gate.push_back(cpu::ExpertMatrix(lw.expert_gate, e, f, d, "ffn_gate_exps"));
          p.up.push_back(cpu::ExpertMatrix(lw.expert_up, e, f, d, "ffn_up_exps"));
          p.down.push_back(cpu::ExpertMatrix(lw.expert_down, e, d, f, "ffn_down_exps"));
        }
        if (sf > 0) {
          p.shared_gate = cpu::MatrixOf(lw.shared_gate, sf, d, "ffn_gate_shexp");
          p.shared_up = cpu::MatrixOf(lw.shared_up, sf, d, "ffn_up_shexp");
          p.shared_down = cpu::MatrixOf(lw.shared_down, d, sf, "ffn_down_shexp");
        }
      } else {
        p.ffn_gate = cpu::MatrixOf(lw.ffn_gate, c_.ffn_dim, d, "ffn_gate");
        p.ffn_up = cpu::MatrixOf(lw.ffn_up, c_.ffn_dim, d, "ffn_up");
        p.ffn_down = cpu::MatrixOf(lw.ffn_down, d, c_.ffn_dim, "ffn_down");
      }
    }
    output_norm_ = cpu::LoadNorm(w_.output_norm, w_.output_norm_bias);
    output_ = cpu::MatrixOf(w_.output_projection(), c_.vocab_size, d, "output");
  }


  // Sizes every batch buffer for `n` rows (no-op once they are big enough).
  void EnsureBatch(int n) {
    const size_t N = static_cast<size_t>(n), d = d_, K = std::max(top_k_, 1);
    for (auto* v : {&x_, &xn_, &fn_, &proj_, &ffn_, &on_, &ys_}) Grow(*v, N * d);
    for (auto* v : {&q_, &attn_}) Grow(*v, N * q_dim_);
    for (auto* v : {&k_, &v_}) Grow(*v, N * kv_dim_);
    Grow(cos_, N * std::max(rope_.half(), 1));
    Grow(sin_, N * std::max(rope_.half(), 1));
    if (any_moe_) {
      const size_t f = c_.expert_ffn_dim, sf = c_.shared_expert_ffn_dim;
      Grow(probs_, N * c_.n_experts);
      Grow(chosen_, N * K);
      Grow(slot_, N * K);
      Grow(weight_, N * K);
      Grow(xe_, N * K * d);
      Grow(ye_, N * K * d);
      for (auto* v : {&ge_, &ue_, &he_}) Grow(*v, N * K * f);
      for (auto* v : {&sg_, &su_, &sh_}) Grow(*v, N * sf);
      Grow(count_, static_cast<size_t>(c_.n_experts));
      Grow(offset_, static_cast<size_t>(c_.n_experts) + 1);
    }
    if (c_.ffn_dim > 0) {
      for (auto* v : {&g_, &u_, &h_}) Grow(*v, N * c_.ffn_dim);
    }
  }

  // Sizes every layer's cache for `positions` positions. The capacity grows
  // geometrically (up to max_seq_len), so decoding reallocates rarely.
  void GrowCaches(InferenceState& state, int positions) {
    const size_t need = static_cast<size_t>(positions) * kv_dim_;
    const size_t cap_max = static_cast<size_t>(c_.max_seq_len) * kv_dim_;
    for (auto* caches : {&state.k_cache, &state.v_cache}) {
      for (auto& cache : *caches) {
        if (cache.capacity() < need) {
          cache.reserve(
              std::min(cap_max, std::max({need, 2 * cache.capacity(), size_t{256} * kv_dim_})));
        }
        cache.resize(need);
      }
    }
  }

  // Runs the queued matrix units and `n_extra` other units in one dispatch.
  template <typename Extra>
  void Dispatch(int64_t n_extra, const Extra& extra) {
    const int64_t n_mat = static_cast<int64_t>(tasks_.size());
    if (n_mat + n_extra == 0) return;
    const auto unit = [&](int64_t i, int thread) {
      // Matrix units first: they are the larger ones, so the smaller units
      // fill the gaps at the end of the dispatch.
      if (i < n_mat) {
        cpu::RunMatTask(kt_, math_, tasks_[i]);
      } else {
        extra(i - n_mat, thread);
      }
    };
    // A reference wrapper keeps std::function from allocating per dispatch.
    pool_.ParallelFor(n_mat + n_extra, std::ref(unit));
    tasks_.clear();
  }

  void DispatchMat() {
    Dispatch(0, [](int64_t, int) {});
  }

  // Runs `fn(t)` for rows [0, n), in parallel when there are several.
  template <typename Fn>
  void ForRows(int n, const Fn& fn) {
    if (n == 1) {
      fn(0);
      return;
    }
    const auto unit = [&](int64_t t, int) { fn(static_cast<int>(t)); };
    pool_.ParallelFor(n, std::ref(unit));
  }

  // q/k norm and RoPE of row `t` (position `pos`), then its K and V appended
  // to layer `l`'s cache.
  void QkRopeAppend(InferenceState& state, int l, int t, int pos) {
    const LayerParams& p = params_[l];
    float* q = q_.data() + static_cast<size_t>(t) * q_dim_;
    float* k = k_.data() + static_cast<size_t>(t) * kv_dim_;
    const float* v = v_.data() + static_cast<size_t>(t) * kv_dim_;
    if (c_.qk_norm) {
      for (int h = 0; h < c_.n_heads; ++h) {
        cpu::RmsNormInPlace(kt_, q + h * hd_, p.q_norm.data(), hd_, c_.norm_eps);
      }
      for (int h = 0; h < c_.n_kv_heads; ++h) {
        cpu::RmsNormInPlace(kt_, k + h * hd_, p.k_norm.data(), hd_, c_.norm_eps);
      }
    }
    if (c_.layers[l].use_rope) {
      const float* cs = cos_.data() + static_cast<size_t>(t) * rope_.half();
      const float* sn = sin_.data() + static_cast<size_t>(t) * rope_.half();
      for (int h = 0; h < c_.n_heads; ++h) rope_.Apply(q + h * hd_, cs, sn);
      for (int h = 0; h < c_.n_kv_heads; ++h) rope_.Apply(k + h * hd_, cs, sn);
    }
    std::memcpy(state.k_cache[l].data() + static_cast<size_t>(pos) * kv_dim_, k,
                sizeof(float) * kv_dim_);
    std::memcpy(state.v_cache[l].data() + static_cast<size_t>(pos) * kv_dim_, v,
                sizeof(float) * kv_dim_);
  }

  // Attention of head `h` for query row `t` at position `pos`.
  void AttendRow(const InferenceState& state, int l, int h, int t, int pos, int thread) {
    const int window = c_.layers[l].sliding_window;
    const int first = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
    const int kvh = h / group_;
    attention_row_(kt_, math_, q_.data() + static_cast<size_t>(t) * q_dim_ + h * hd_,
                   state.k_cache[l].data() + kvh * hd_, state.v_cache[l].data() + kvh * hd_,
                   kv_dim_, first, pos, hd_, scale_,
                   scores_.data() + static_cast<size_t>(thread) * c_.max_seq_len,
                   attn_.data() + static_cast<size_t>(t) * q_dim_ + h * hd_, break_identity_);
  }

  // Router probabilities, top-k, weights (C7) of rows [0, n) from their
  // logits in probs_; then the rows' slots in the expert buffers: grouped
  // by expert, in token order within an expert. With `gather`, copies each
  // row's FFN input `fn` to its slots in xe_.
  void Route(int n, const float* fn, bool gather) {
    const int E = c_.n_experts, K = top_k_;
    for (int t = 0; t < n; ++t) {
      float* p = probs_.data() + static_cast<size_t>(t) * E;
      cpu::SoftmaxInPlace(p, E, math_);
      int* chosen = chosen_.data() + static_cast<size_t>(t) * K;
      float* weight = weight_.data() + static_cast<size_t>(t) * K;
      cpu::TopK(p, E, K, chosen);
      for (int r = 0; r < K; ++r) weight[r] = p[chosen[r]];
      if (c_.renormalize_top_k) {
        const float z = numerics::Sum(weight, static_cast<size_t>(K));
        for (int r = 0; r < K; ++r) weight[r] = weight[r] / z;
      }
    }
    std::fill(count_.begin(), count_.begin() + E, 0);
    for (int i = 0; i < n * K; ++i) count_[chosen_[i]] += 1;
    offset_[0] = 0;
    for (int e = 0; e < E; ++e) offset_[e + 1] = offset_[e] + count_[e];
    std::fill(count_.begin(), count_.begin() + E, 0);
    for (int t = 0; t < n; ++t) {
      for (int r = 0; r < K; ++r) {
        const int e = chosen_[t * K + r];
        const int s = offset_[e] + count_[e]++;
        slot_[t * K + r] = s;
        if (gather) {
          std::memcpy(xe_.data() + static_cast<size_t>(s) * d_, fn + static_cast<size_t>(t) * d_,
                      sizeof(float) * d_);
        }
      }
    }
  }

  // Queues the experts' gate/up (fused with SwiGLU) for the routed rows, and
  // the shared expert's. With one row, the experts read `fn` directly.
  void QueueExpertsIn(int l, int n, const float* fn) {
    const LayerParams& p = params_[l];
    const int f = c_.expert_ffn_dim;
    for (int e = 0; e < c_.n_experts; ++e) {
      const int cnt = offset_[e + 1] - offset_[e];
      if (cnt == 0) continue;
      const size_t s = static_cast<size_t>(offset_[e]);
      const float* xin = n == 1 ? fn : xe_.data() + s * d_;
      cpu::AppendMatTasks(cut_, xin, cnt, p.gate[e], ge_.data() + s * f, f, tasks_, &p.up[e],
                          ue_.data() + s * f, he_.data() + s * f);
    }
    if (c_.shared_expert_ffn_dim > 0) {
      const int sf = c_.shared_expert_ffn_dim;
      cpu::AppendMatTasks(cut_, fn, n, p.shared_gate, sg_.data(), sf, tasks_, &p.shared_up,
                          su_.data(), sh_.data());
    }
  }

  // Queues the experts' and the shared expert's down projections.
  void QueueExpertsOut(int l, int n) {
    const LayerParams& p = params_[l];
    const int f = c_.expert_ffn_dim;
    for (int e = 0; e < c_.n_experts; ++e) {
      const int cnt = offset_[e + 1] - offset_[e];
      if (cnt == 0) continue;
      const size_t s = static_cast<size_t>(offset_[e]);
      cpu::AppendMatTasks(cut_, he_.data() + s * f, cnt, p.down[e], ye_.data() + s * d_, d_,
                          tasks_);
    }
    if (c_.shared_expert_ffn_dim > 0) {
      cpu::AppendMatTasks(cut_, sh_.data(), n, p.shared_down, ys_.data(), d_, tasks_);
    }
  }

  // C7: ffn[t] = sum over ranks of fma(w_r, y_r, .), then + shared.
  void CombineExperts(int n) {
    const int K = top_k_;
    for (int t = 0; t < n; ++t) {
      float* o = ffn_.data() + static_cast<size_t>(t) * d_;
      std::fill(o, o + d_, 0.0f);
      for (int r = 0; r < K; ++r) {
        const float w = weight_[t * K + r];
        const float* y = ye_.data() + static_cast<size_t>(slot_[t * K + r]) * d_;
        for (int i = 0; i < d_; ++i) o[i] = std::fma(w, y[i], o[i]);
      }
      if (c_.shared_expert_ffn_dim > 0) {
        const float* y = ys_.data() + static_cast<size_t>(t) * d_;
        for (int i = 0; i < d_; ++i) o[i] = o[i] + y[i];
      }
    }
  }

  // x = x + y over n rows of d_model.
  void Residual(int n, const float* y) {
    float* x = x_.data();
    const size_t total = static_cast<size_t>(n) * d_;
    for (size_t i = 0; i < total; ++i) x[i] = x[i] + y[i];
  }

  // One layer for one token at position `pos`.
  void DecodeLayer(InferenceState& state, int l, int pos) {
    const LayerParams& p = params_[l];
    const LayerConfig& lc = c_.layers[l];
    const bool parallel = c_.parallel_block;
    Profiler* prof = profiler_.get();
    {
      ProfileScope scope(prof, kind_, ProfileOp::kNorms);
      cpu::NormRow(c_.norm, kt_, x_.data(), p.attn_norm, d_, c_.norm_eps, xn_.data());
    }
    TraceRows(l, "attn_norm", pos, 1, xn_.data(), d_, d_);

    // Dispatch 1: q, k, v; in a parallel block also the FFN's first matrices
    // (the router, or the dense gate/up), which read the same norm output.
    cpu::AppendMatTasks(cut_, xn_.data(), 1, p.wq, q_.data(), q_dim_, tasks_);
    cpu::AppendMatTasks(cut_, xn_.data(), 1, p.wk, k_.data(), kv_dim_, tasks_);
    cpu::AppendMatTasks(cut_, xn_.data(), 1, p.wv, v_.data(), kv_dim_, tasks_);
    if (parallel) {
      if (lc.moe) {
        cpu::AppendMatTasks(cut_, xn_.data(), 1, p.router, probs_.data(), c_.n_experts, tasks_);
      } else {
        cpu::AppendMatTasks(cut_, xn_.data(), 1, p.ffn_gate, g_.data(), c_.ffn_dim, tasks_,
                            &p.ffn_up, u_.data(), h_.data());
      }
    }
    {
      ProfileScope scope(prof, kind_, parallel ? ProfileOp::kQkvFfnIn : ProfileOp::kQkv);
      DispatchMat();
    }
    {
      ProfileScope scope(prof, kind_, ProfileOp::kRopeKv);
      QkRopeAppend(state, l, 0, pos);
    }
    TraceRows(l, "q", pos, 1, q_.data(), q_dim_, q_dim_);
    TraceRows(l, "k", pos, 1, k_.data(), kv_dim_, kv_dim_);
    TraceRows(l, "v", pos, 1, v_.data(), kv_dim_, kv_dim_);

    // Dispatch 2: one unit per attention head; in a parallel MoE block also
    // the chosen experts' gate/up (and the shared expert's).
    if (parallel && lc.moe) {
      {
        ProfileScope scope(prof, kind_, ProfileOp::kRouter);
        Route(1, xn_.data(), false);
      }
      QueueExpertsIn(l, 1, xn_.data());
    }
    {
      ProfileScope scope(prof, kind_,
                         parallel && lc.moe ? ProfileOp::kAttentionFfnIn : ProfileOp::kAttention);
      Dispatch(c_.n_heads, [&](int64_t h, int thread) {
        AttendRow(state, l, static_cast<int>(h), 0, pos, thread);
      });
    }
    TraceRows(l, "attn", pos, 1, attn_.data(), q_dim_, q_dim_);

    // Dispatch 3: o_proj; in a parallel block also the FFN's down matrices.
    cpu::AppendMatTasks(cut_, attn_.data(), 1, p.wo, proj_.data(), d_, tasks_);
    if (parallel) {
      if (lc.moe) {
        QueueExpertsOut(l, 1);
      } else {
        cpu::AppendMatTasks(cut_, h_.data(), 1, p.ffn_down, ffn_.data(), d_, tasks_);
      }
    }
    {
      ProfileScope scope(prof, kind_, parallel ? ProfileOp::kOProjFfnOut : ProfileOp::kOProj);
      DispatchMat();
    }
    TraceRows(l, "attn_out", pos, 1, proj_.data(), d_, d_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kResidual);
      Residual(1, proj_.data());
    }
    TraceRows(l, "attn_residual", pos, 1, x_.data(), d_, d_);

    if (!parallel) {
      {
        ProfileScope scope(prof, kind_, ProfileOp::kNorms);
        cpu::NormRow(c_.norm, kt_, x_.data(), p.ffn_norm, d_, c_.norm_eps, fn_.data());
      }
      TraceRows(l, "ffn_norm", pos, 1, fn_.data(), d_, d_);
      if (lc.moe) {
        {
          ProfileScope scope(prof, kind_, ProfileOp::kRouter);
          // The router is small: one GEMV on this thread unless it is large.
          if (p.router.rows * p.router.row_bytes() <= cut_.gemv_chunk_bytes) {
            kt_.gemv(fn_.data(), p.router.data, p.router.dtype, p.router.cols, 0, p.router.rows,
                     probs_.data());
          } else {
            cpu::AppendMatTasks(cut_, fn_.data(), 1, p.router, probs_.data(), c_.n_experts, tasks_);
            DispatchMat();
          }
          Route(1, fn_.data(), false);
        }
        ProfileScope scope(prof, kind_, ProfileOp::kFfn);
        QueueExpertsIn(l, 1, fn_.data());
        DispatchMat();
        QueueExpertsOut(l, 1);
        DispatchMat();
      } else {
        ProfileScope scope(prof, kind_, ProfileOp::kFfn);
        cpu::AppendMatTasks(cut_, fn_.data(), 1, p.ffn_gate, g_.data(), c_.ffn_dim, tasks_,
                            &p.ffn_up, u_.data(), h_.data());
        DispatchMat();
        cpu::AppendMatTasks(cut_, h_.data(), 1, p.ffn_down, ffn_.data(), d_, tasks_);
        DispatchMat();
      }
    }
    if (lc.moe) {
      TraceRows(l, "router", pos, 1, probs_.data(), c_.n_experts, c_.n_experts);
      ProfileScope scope(prof, kind_, ProfileOp::kFfn);
      CombineExperts(1);
    }
    TraceRows(l, "ffn", pos, 1, ffn_.data(), d_, d_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kResidual);
      Residual(1, ffn_.data());
    }
    TraceRows(l, "ffn_residual", pos, 1, x_.data(), d_, d_);
  }

  // One layer for rows [0, n) at positions n_past ... n_past + n - 1.
  void BatchLayer(InferenceState& state, int l, int n_past, int n) {
    const LayerParams& p = params_[l];
    const LayerConfig& lc = c_.layers[l];
    Profiler* prof = profiler_.get();
    {
      ProfileScope scope(prof, kind_, ProfileOp::kNorms);
      ForRows(n, [&](int t) {
        cpu::NormRow(c_.norm, kt_, x_.data() + static_cast<size_t>(t) * d_, p.attn_norm, d_,
                     c_.norm_eps, xn_.data() + static_cast<size_t>(t) * d_);
      });
    }
    TraceRows(l, "attn_norm", n_past, n, xn_.data(), d_, d_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kQkv);
      cpu::AppendMatTasks(cut_, xn_.data(), n, p.wq, q_.data(), q_dim_, tasks_);
      cpu::AppendMatTasks(cut_, xn_.data(), n, p.wk, k_.data(), kv_dim_, tasks_);
      cpu::AppendMatTasks(cut_, xn_.data(), n, p.wv, v_.data(), kv_dim_, tasks_);
      DispatchMat();
    }
    {
      ProfileScope scope(prof, kind_, ProfileOp::kRopeKv);
      ForRows(n, [&](int t) { QkRopeAppend(state, l, t, n_past + t); });
    }
    TraceRows(l, "q", n_past, n, q_.data(), q_dim_, q_dim_);
    TraceRows(l, "k", n_past, n, k_.data(), kv_dim_, kv_dim_);
    TraceRows(l, "v", n_past, n, v_.data(), kv_dim_, kv_dim_);
    {
      // One unit per (head, block of query rows).
      ProfileScope scope(prof, kind_, ProfileOp::kAttention);
      const int blocks = (n + row_block_ - 1) / row_block_;
      Dispatch(int64_t{c_.n_heads} * blocks, [&](int64_t unit, int thread) {
        const int h = static_cast<int>(unit / blocks);
        const int b = static_cast<int>(unit % blocks);
        const int end = std::min(n, (b + 1) * row_block_);
        for (int t = b * row_block_; t < end; ++t) AttendRow(state, l, h, t, n_past + t, thread);
      });
    }
    TraceRows(l, "attn", n_past, n, attn_.data(), q_dim_, q_dim_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kOProj);
      cpu::AppendMatTasks(cut_, attn_.data(), n, p.wo, proj_.data(), d_, tasks_);
      DispatchMat();
    }
    TraceRows(l, "attn_out", n_past, n, proj_.data(), d_, d_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kResidual);
      Residual(n, proj_.data());
    }
    TraceRows(l, "attn_residual", n_past, n, x_.data(), d_, d_);

    const float* fn = xn_.data();
    if (!c_.parallel_block) {
      {
        ProfileScope scope(prof, kind_, ProfileOp::kNorms);
        ForRows(n, [&](int t) {
          cpu::NormRow(c_.norm, kt_, x_.data() + static_cast<size_t>(t) * d_, p.ffn_norm, d_,
                       c_.norm_eps, fn_.data() + static_cast<size_t>(t) * d_);
        });
      }
      fn = fn_.data();
      TraceRows(l, "ffn_norm", n_past, n, fn, d_, d_);
    }
    if (lc.moe) {
      {
        ProfileScope scope(prof, kind_, ProfileOp::kRouter);
        cpu::AppendMatTasks(cut_, fn, n, p.router, probs_.data(), c_.n_experts, tasks_);
        DispatchMat();
        Route(n, fn, true);
      }
      TraceRows(l, "router", n_past, n, probs_.data(), c_.n_experts, c_.n_experts);
      ProfileScope scope(prof, kind_, ProfileOp::kFfn);
      QueueExpertsIn(l, n, fn);
      DispatchMat();
      QueueExpertsOut(l, n);
      DispatchMat();
      CombineExperts(n);
    } else {
      ProfileScope scope(prof, kind_, ProfileOp::kFfn);
      cpu::AppendMatTasks(cut_, fn, n, p.ffn_gate, g_.data(), c_.ffn_dim, tasks_, &p.ffn_up,
                          u_.data(), h_.data());
      DispatchMat();
      cpu::AppendMatTasks(cut_, h_.data(), n, p.ffn_down, ffn_.data(), d_, tasks_);
      DispatchMat();
    }
    TraceRows(l, "ffn", n_past, n, ffn_.data(), d_, d_);
    {
      ProfileScope scope(prof, kind_, ProfileOp::kResidual);
      Residual(n, ffn_.data());
    }
    TraceRows(l, "ffn_residual", n_past, n, x_.data(), d_, d_);
  }

  // Output norm and projection of the output rows: every row, or the last.
  void Head(int n_past, int n, bool all_positions, std::vector<float>& logits) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kHead);
    const int first = all_positions ? 0 : n - 1;
    const int rows = n - first;
    ForRows(rows, [&](int r) {
      cpu::NormRow(c_.norm, kt_, x_.data() + static_cast<size_t>(first + r) * d_, output_norm_, d_,
                   c_.norm_eps, on_.data() + static_cast<size_t>(r) * d_);
    });
    TraceRows(-1, "output_norm", n_past + first, rows, on_.data(), d_, d_);
    const int V = c_.vocab_size;
    cpu::AppendMatTasks(cut_, on_.data(), rows, output_, logits.data(), V, tasks_);
    DispatchMat();
    if (c_.logit_scale != 1.0f) {
      const float s = c_.logit_scale;
      for (float& v : logits) v = v * s;
    }
    TraceRows(-1, "logits", n_past + first, rows, logits.data(), V, V);
  }

  // Records `rows` rows of `data` (row stride `stride`, `count` values each)
  // for positions first_pos, first_pos + 1, ..., when a trace was requested.
  void TraceRows(int layer, const char* op, int first_pos, int rows, const float* data,
                 int64_t stride, int64_t count) {
    if (trace_ == nullptr) return;
    for (int t = 0; t < rows; ++t) {
      const float* row = data + static_cast<ptrdiff_t>(t) * stride;
      pending_.push_back(
          PendingRecord{layer, op, first_pos + t, std::vector<float>(row, row + count)});
    }
  }

  // Sends the held trace records in the reference's order: by position,
  // and within a position in the order they were made (layer, then op).
  void FlushTrace() {
    if (trace_ == nullptr) return;
    std::stable_sort(
        pending_.begin(), pending_.end(),
        [](const PendingRecord& a, const PendingRecord& b) { return a.position < b.position; });
    for (const PendingRecord& r : pending_) {
      trace_->Record(r.layer, r.op, r.position, r.data.data(), static_cast<int64_t>(r.data.size()));
    }
    pending_.clear();
    trace_ = nullptr;
  }

  const ModelWeights& w_;
  const ModelConfig& c_;
  const numerics::MathLibrary& math_;
  threads::ThreadPool& pool_;
  const kernels::KernelTable& kt_;
  const cpu::AttentionRowFn attention_row_;
  const bool break_identity_;
  cpu::Cutting cut_;
  int row_block_ = 16;
  std::unique_ptr<Profiler> profiler_;
  PassKind kind_ = PassKind::kPrefill;

  int d_ = 0, hd_ = 0, q_dim_ = 0, kv_dim_ = 0, group_ = 1, top_k_ = 0;
  float scale_ = 1.0f;
  bool any_rope_ = false, any_moe_ = false;
  cpu::RopeTable rope_;
  std::vector<LayerParams> params_;
  cpu::NormParams output_norm_;
  Matrix output_;

  // Batch buffers, (rows, width) each; see EnsureBatch.
  std::vector<float> x_, xn_, fn_, proj_, ffn_, on_;
  std::vector<float> q_, k_, v_, attn_;
  std::vector<float> cos_, sin_;
  std::vector<float> probs_, weight_;
  std::vector<int> chosen_, slot_, count_, offset_;
  std::vector<float> xe_, ge_, ue_, he_, ye_;
  std::vector<float> sg_, su_, sh_, ys_;
  std::vector<float> g_, u_, h_;
  std::vector<float> scores_;  // (threads, max_seq_len)
  std::vector<MatTask> tasks_;

  TraceSink* trace_ = nullptr;
  std::vector<PendingRecord> pending_;
};

}  // namespace

std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options) {
  if (!kernels::IsaAvailable(options.isa)) {
    throw std::invalid_argument(std::string("cpu forward: ISA ") + kernels::IsaName(options.isa) +
                                " is not available on this machine or in this build");
  }
  // A negative control for the identity tests only: it sums attention's V in
  // the wrong order, so tests can show that they catch an order change.
  const char* env = std::getenv("SAMEBITS_TEST_ONLY_BREAK_IDENTITY");
  const bool break_identity = env != nullptr && std::string(env) == "1";
  if (break_identity) {
    std::fprintf(stderr,
                 "samebits: SAMEBITS_TEST_ONLY_BREAK_IDENTITY=1: the cpu pass sums attention in "
                 "a forbidden order and its logits WILL differ; unset it outside the tests\n");
  }
  return std::make_unique<CpuForward>(weights, math, pool, options, break_identity);
}

}  // namespace samebits::model
