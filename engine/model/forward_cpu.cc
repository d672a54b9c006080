// The fast forward pass: the same numbers as forward_reference.cc, bit for
// bit, in every configuration (threads, chunk and tile sizes, ISA, batch
// split), because every output element is computed whole by one unit of
// work in the contract's order (engine/numerics/README.md, C1-C7). Threads
// split outputs (weight rows, tiles, heads, experts), never a reduction.
//
// One routine, `Layer`, runs a layer over the call's token rows (one for
// decode, the chunk for prefill and extend; with a batch, the rows of every
// sequence one after another, cpu_call_rows.h); its body is the reference's
// step list. A batch shares the matrix units (each weight matrix is read
// once for all rows) and the experts' grouping; the per-row steps use each
// row's own position, and attention runs per sequence against its own KV
// cache. Since every unit computes whole outputs (C2), a row's bits never
// depend on the other rows of the call. Matrix work is queued as units
// (cpu_work.h: GEMV row chunks for one row, GEMM tiles for several) and run
// by `Flush`, one pool dispatch per flush, together with any queued
// attention units (one per sequence, head and block of query rows). A
// parallel block queues its FFN beside attention, so it needs three
// dispatches where the sequential block needs five:
//   sequential: [q|k|v] -> [attention] -> [o_proj] -> [router or FFN gate/up]
//               -> [experts' gate/up] -> [FFN down]
//   parallel:   [q|k|v + router or FFN gate/up] -> [attention + experts'
//               gate/up] -> [o_proj + FFN down]
// Norms, q/k norm, RoPE (angles computed once per position), the KV append,
// softmax/top-k and the combines run between flushes. Every ISA-specific
// loop is behind the kernel table (engine/kernels/kernels.h).
//
// Every buffer is in `cpu::Activations` (cpu_activations.h) with its shape.
// KV caches and attention scratch grow with the positions a run reaches,
// never with the checkpoint's claimed context length.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/cpu_activations.h"
#include "engine/model/cpu_call_rows.h"
#include "engine/model/cpu_ops.h"
#include "engine/model/cpu_trace_buffer.h"
#include "engine/model/cpu_work.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"
#include "engine/numerics/half.h"
#include "engine/numerics/lanes.h"

namespace samebits::model {
namespace {

using cpu::Matrix;
using cpu::MatTask;

// The matrices and norm weights of one layer, resolved once.
struct LayerParams {
  Matrix wq, wk, wv, wo;
  Matrix ffn_gate, ffn_up, ffn_down;
  Matrix router;
  std::vector<Matrix> gate, up, down;  // per expert
  Matrix shared_gate, shared_up, shared_down;
  cpu::NormParams attn_norm, ffn_norm;
  cpu::NormParams post_attn_norm, post_ffn_norm;  // with post_norms
  std::vector<float> q_norm, k_norm;
  std::vector<float> q_bias, k_bias, v_bias;  // with qkv_bias
};

// The attention queued for the next flush: layer `layer` for every row of
// the call, one unit per (sequence, head, block of the sequence's rows).
struct AttentionWork {
  bool queued = false;
  int layer = 0;
};

class CpuForward final : public Forward {
 public:
  CpuForward(const ModelWeights& w, const numerics::MathLibrary& math, threads::ThreadPool& pool,
             const CpuOptions& options, const kernels::KernelTable& kt,
             const kernels::KernelTable& multi_sequence_kt)
      : w_(w),
        c_(w.config),
        math_(math),
        pool_(pool),
        kt_(kt),
        multi_sequence_kt_(multi_sequence_kt) {
    const auto problems = c_.Validate();
    if (!problems.empty()) throw std::invalid_argument(problems.front());
    if (static_cast<int>(w_.layers.size()) != c_.n_layers()) {
      throw std::invalid_argument(c_.name + ": weights have " + std::to_string(w_.layers.size()) +
                                  " layers but the config has " + std::to_string(c_.n_layers()));
    }
    cut_.gemv_chunk_bytes = std::max<int64_t>(1, options.gemv_chunk_bytes);
    // Bounded as the knobs' ranges are (model/tuning.h), for callers that
    // set the options directly.
    constexpr int64_t kMostRows = int64_t{1} << 20;
    cut_.gemm_tile_m = static_cast<int>(std::clamp<int64_t>(options.gemm_tile_m, 1, kMostRows));
    cut_.gemm_tile_n = static_cast<int>(std::clamp<int64_t>(options.gemm_tile_n, 1, kMostRows));
    row_block_ = static_cast<int>(std::clamp<int64_t>(options.attention_row_block, 1, kMostRows));
    if (options.profile) profiler_ = std::make_unique<Profiler>();

    d_ = c_.d_model;
    hd_ = c_.head_dim;
    q_dim_ = c_.n_heads * hd_;
    kv_dim_ = c_.n_kv_heads * hd_;
    group_ = c_.n_heads / c_.n_kv_heads;
    scale_ = 1.0f / std::sqrt(static_cast<float>(hd_));
    inv_attn_softcap_ = c_.attn_softcap > 0.0f ? 1.0f / c_.attn_softcap : 0.0f;
    for (const LayerConfig& lc : c_.layers) any_rope_ = any_rope_ || lc.use_rope;
    if (any_rope_) {
      if (c_.rope_freq_factors) freq_factors_ = cpu::LoadNorm(w_.rope_freqs, TensorView{}).weight;
      rope_ = cpu::RopeTable(c_.rotary_dim(), c_.rope_style, c_.rope_base, math_, freq_factors_);
      if (c_.rope_base_local > 0.0f) {
        rope_local_ = cpu::RopeTable(c_.rotary_dim(), c_.rope_style, c_.rope_base_local, math_,
                                     freq_factors_);
      }
    }
    LoadParams();
  }

  void RunBatch(std::span<const SequenceCall> calls) override {
    CheckBatchInputs(w_, calls);
    rows_.Assign(calls);
    int fed = 0;  // sequences with rows in this call
    for (const cpu::CallSequence& s : rows_.sequences) {
      s.logits->resize(static_cast<size_t>(s.outputs) * c_.vocab_size);
      fed += s.rows > 0 ? 1 : 0;
    }
    const int n = rows_.n;
    if (n == 0) return;
    mat_kt_ = fed > 1 ? &multi_sequence_kt_ : &kt_;
    kind_ = KindOf(rows_);
    if (profiler_) profiler_->CountPass(kind_, n);
    trace_.Clear();
    tasks_.clear();  // nothing left over from a call that threw
    attention_ = AttentionWork{};
    Reserve();
    PlanAttention();

    Embed();
    for (int l = 0; l < c_.n_layers(); ++l) Layer(l, n);
    Head();
    for (const cpu::CallSequence& s : rows_.sequences) s.state->n_past += s.rows;
    FlushTrace();
  }

  std::string ProfileReport() const override {
    return profiler_ ? profiler_->Report() : std::string();
  }

  int64_t MatrixBytesRead() const override { return matrix_bytes_read_; }

 private:
  // One layer over the call's `n` rows (rows_ holds each one's sequence and
  // position): the steps of forward_reference.cc's Layer, in its order, with
  // a parallel block's FFN queued beside its attention.
  void Layer(int l, int n) {
    const LayerParams& p = params_[l];
    const bool moe = c_.layers[l].moe;
    const bool parallel = c_.parallel_block;
    cpu::Activations& a = a_;

    // Attention norm: xn = norm(x)                              (n, d_model)
    NormRows(p.attn_norm, a.x.data(), a.xn.data(), n);
    TraceRows(l, "attn_norm", a.xn.data(), d_);

    // Projections: q = Wq xn, k = Wk xn, v = Wv xn   (n, q_dim), (n, kv_dim) x 2
    QueueMat(a.xn.data(), n, p.wq, a.q.data(), q_dim_);
    QueueMat(a.xn.data(), n, p.wk, a.k.data(), kv_dim_);
    QueueMat(a.xn.data(), n, p.wv, a.v.data(), kv_dim_);
    if (parallel) QueueFfnIn(l, n, a.xn.data());  // the FFN reads the same xn
    Flush(parallel ? ProfileOp::kQkvFfnIn : ProfileOp::kQkv);

    // q/k norm per head, RoPE, then append k, v to the cache    (n, kv_dim)
    QkRopeAppend(l, n);
    TraceRows(l, "q", a.q.data(), q_dim_);
    TraceRows(l, "k", a.k.data(), kv_dim_);
    TraceRows(l, "v", a.v.data(), kv_dim_);

    // Attention per head and query row (GQA, causal + window)   (n, q_dim)
    if (parallel && moe) {
      Route(n, a.xn.data());
      QueueExpertsIn(l, n, a.xn.data());
    }
    attention_ = AttentionWork{true, l};
    Flush(parallel && moe ? ProfileOp::kAttentionFfnIn : ProfileOp::kAttention);
    TraceRows(l, "attn", a.attn.data(), q_dim_);

    // Output projection: attn_out = Wo attn                     (n, d_model)
    QueueMat(a.attn.data(), n, p.wo, a.proj.data(), d_);
    if (parallel) QueueFfnOut(l, n);
    Flush(parallel ? ProfileOp::kOProjFfnOut : ProfileOp::kOProj);
    // Post-attention norm (Gemma 2/3): attn_out = norm(attn_out)
    const float* attn_out = PostNorm(p.post_attn_norm, a.proj.data(), n);
    TraceRows(l, "attn_out", attn_out, d_);

    // Residual: x = x + attn_out
    Residual(n, attn_out);
    TraceRows(l, "attn_residual", a.x.data(), d_);

    // FFN (sequential block): fn = norm(x), then the experts or dense SwiGLU
    if (!parallel) {
      NormRows(p.ffn_norm, a.x.data(), a.fn.data(), n);
      TraceRows(l, "ffn_norm", a.fn.data(), d_);
      QueueFfnIn(l, n, a.fn.data());
      Flush(moe ? ProfileOp::kRouter : ProfileOp::kFfn);
      if (moe) {
        Route(n, a.fn.data());
        QueueExpertsIn(l, n, a.fn.data());
        Flush(ProfileOp::kFfn);
      }
      QueueFfnOut(l, n);
      Flush(ProfileOp::kFfn);
    }
    if (moe) {
      TraceRows(l, "router", a.probs.data(), c_.n_experts);
      CombineExperts(n);  // ffn = rank-ordered fma combine + shared expert
    }
    // Post-FFN norm (Gemma 2/3): ffn = norm(ffn)
    const float* ffn = PostNorm(p.post_ffn_norm, a.ffn.data(), n);
    TraceRows(l, "ffn", ffn, d_);

    // Residual: x = x + ffn
    Residual(n, ffn);
    TraceRows(l, "ffn_residual", a.x.data(), d_);
  }

  // Resolves every layer's matrices and norm weights once (names the
  // tensor when one is missing or misshapen).
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
      if (c_.post_norms) {
        p.post_attn_norm = cpu::LoadNorm(lw.post_attn_norm, TensorView{});
        p.post_ffn_norm = cpu::LoadNorm(lw.post_ffn_norm, TensorView{});
      }
      if (c_.qk_norm) {
        p.q_norm = cpu::LoadNorm(lw.q_norm, TensorView{}).weight;
        p.k_norm = cpu::LoadNorm(lw.k_norm, TensorView{}).weight;
      }
      if (c_.qkv_bias) {
        p.q_bias = cpu::LoadNorm(lw.q_bias, TensorView{}).weight;
        p.k_bias = cpu::LoadNorm(lw.k_bias, TensorView{}).weight;
        p.v_bias = cpu::LoadNorm(lw.v_bias, TensorView{}).weight;
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
    RepackForDecode();
  }

  // Gives every matrix a table can decode repacked its repacked copy
  // (kernels/int8_repack.h): the integer profile's Q4_K on AVX-512. The
  // same bits as the original rows, sixteen rows to a vector.
  void RepackForDecode() {
    std::vector<Matrix*> matrices;
    for (LayerParams& p : params_) {
      for (Matrix* m : {&p.wq, &p.wk, &p.wv, &p.wo, &p.ffn_gate, &p.ffn_up, &p.ffn_down, &p.router,
                        &p.shared_gate, &p.shared_up, &p.shared_down}) {
        matrices.push_back(m);
      }
      for (std::vector<Matrix>* experts : {&p.gate, &p.up, &p.down}) {
        for (Matrix& m : *experts) matrices.push_back(&m);
      }
    }
    matrices.push_back(&output_);
    repacked_.Repack(kt_.gemv_quant_repacked != nullptr ? kt_ : multi_sequence_kt_, matrices);
  }

  // Returns the profiler's name for a call: prefill when every sequence
  // starts empty, decode when each feeds one row, else extend.
  static PassKind KindOf(const cpu::CallRows& rows) {
    bool all_empty = true, all_single = true;
    for (const cpu::CallSequence& s : rows.sequences) {
      all_empty = all_empty && s.n_past == 0;
      all_single = all_single && s.rows == 1;
    }
    return all_empty ? PassKind::kPrefill : (all_single ? PassKind::kDecode : PassKind::kExtend);
  }

  // Sizes the activations for the call's rows, the attention scratch for
  // the positions it reaches, and every layer's KV cache of each sequence
  // for its own. Sizes follow the need only: a checkpoint claiming a context
  // of 2^31 - 1 positions reserves nothing for the positions a run does
  // not reach.
  void Reserve() {
    const int64_t positions = rows_.positions_reached;
    try {
      a_.Reserve(c_, rows_.n);
      if (rows_.sequences.size() > 1) {
        const size_t outputs = rows_.output_rows.size() * static_cast<size_t>(c_.vocab_size);
        if (head_logits_.size() < outputs) head_logits_.resize(outputs);
      }
      scores_stride_ = positions;
      const size_t scores = static_cast<size_t>(pool_.size()) * static_cast<size_t>(positions);
      if (scores_.size() < scores) scores_.resize(scores);
      for (const cpu::CallSequence& s : rows_.sequences) {
        GrowCaches(*s.state, int64_t{s.n_past} + s.rows);
      }
    } catch (const std::bad_alloc&) {
      throw std::runtime_error(OutOfMemoryMessage());
    }
  }

  // Returns what ran out of memory in Reserve: the positions of one
  // sequence, or, when the call decodes several, the batch (its sequences
  // and all their positions: one sequence's positions would blame the
  // scenario for what the batch asked).
  std::string OutOfMemoryMessage() const {
    int64_t total = 0;
    for (const cpu::CallSequence& s : rows_.sequences) total += int64_t{s.n_past} + s.rows;
    const auto kv_mib = [&](int64_t positions) {
      return std::to_string(
          static_cast<int64_t>(2.0 * c_.n_layers() * static_cast<double>(positions) * kv_dim_ *
                               sizeof(float) / (1024.0 * 1024.0)));
    };
    const std::string per_position = " MiB: 2 x " + std::to_string(c_.n_layers()) + " layers x " +
                                     std::to_string(kv_dim_) + " floats per position)";
    if (rows_.sequences.size() > 1) {
      return c_.name + ": out of memory for a batch of " + std::to_string(rows_.sequences.size()) +
             " sequences (" + std::to_string(total) + " positions together, at most " +
             std::to_string(rows_.positions_reached) + " in one; their KV caches alone need " +
             kv_mib(total) + per_position +
             "; run a smaller --batch or on a machine with more memory";
    }
    return c_.name + ": out of memory for " + std::to_string(rows_.positions_reached) +
           " positions (the KV cache alone needs " + kv_mib(rows_.positions_reached) +
           per_position + "; run fewer positions or on a machine with more memory";
  }

  // Sizes every layer's cache for `positions` positions. The capacity grows
  // geometrically (to at most twice the need), so decoding reallocates
  // rarely; growth copies the rows already there, so no bit changes.
  void GrowCaches(InferenceState& state, int64_t positions) {
    const size_t need = static_cast<size_t>(positions) * kv_dim_;
    for (auto* caches : {&state.k_cache, &state.v_cache}) {
      for (auto& cache : *caches) {
        if (cache.capacity() < need) {
          cache.reserve(std::max({need, 2 * cache.capacity(), size_t{256} * kv_dim_}));
        }
        cache.resize(need);
      }
    }
  }

  // Embedding x[t] = E[token t] (n, d_model), and the RoPE angles of each
  // row's position, once per position (n, rot_dim / 2).
  void Embed() {
    {
      ProfileScope scope(profiler_.get(), kind_, ProfileOp::kEmbed);
      for (int t = 0; t < rows_.n; ++t) {
        float* x = a_.x.data() + static_cast<size_t>(t) * d_;
        w_.token_embedding.ReadF32(int64_t{rows_.tokens[t]} * d_, d_, x);
        if (c_.embedding_scale != 1.0f) {
          for (int i = 0; i < d_; ++i) x[i] = x[i] * c_.embedding_scale;
        }
      }
      for (const cpu::CallSequence& s : rows_.sequences) {
        if (!any_rope_) break;
        const size_t at = static_cast<size_t>(s.row0) * rope_.half();
        rope_.Fill(s.n_past, s.rows, math_, a_.cos.data() + at, a_.sin.data() + at);
        if (c_.rope_base_local > 0.0f) {
          rope_local_.Fill(s.n_past, s.rows, math_, a_.cos_local.data() + at,
                           a_.sin_local.data() + at);
        }
      }
    }
    TraceRows(-1, "embed", a_.x.data(), d_);
  }

  // Queues y = W x for `m` rows of x (width w.cols) into y (width `ldy`).
  void QueueMat(const float* x, int m, const Matrix& w, float* y, int64_t ldy) {
    cpu::AppendMatTasks(cut_, x, m, w, y, ldy, tasks_);
  }

  // Queues the FFN's first matrices over `in`: the router's logits (MoE), or
  // the dense gate and up fused with SwiGLU.
  void QueueFfnIn(int l, int n, const float* in) {
    const LayerParams& p = params_[l];
    if (c_.layers[l].moe) {
      QueueMat(in, n, p.router, a_.probs.data(), c_.n_experts);
    } else {
      cpu::AppendMatTasks(cut_, in, n, p.ffn_gate, a_.gate.data(), c_.ffn_dim, tasks_, &p.ffn_up,
                          a_.up.data(), a_.hidden.data());
    }
  }

  // Queues the FFN's last matrices: the experts' down projections (MoE), or
  // the dense down projection into ffn.
  void QueueFfnOut(int l, int n) {
    if (c_.layers[l].moe) {
      QueueExpertsOut(l, n);
    } else {
      QueueMat(a_.hidden.data(), n, params_[l].ffn_down, a_.ffn.data(), d_);
    }
  }

  // Numbers the call's attention units: sequence s owns units
  // [attention_unit0_[s], attention_unit0_[s + 1]), one per head and block
  // of its rows.
  void PlanAttention() {
    attention_unit0_.assign(1, 0);
    for (const cpu::CallSequence& s : rows_.sequences) {
      const int64_t blocks = (s.rows + row_block_ - 1) / row_block_;
      attention_unit0_.push_back(attention_unit0_.back() + int64_t{c_.n_heads} * blocks);
    }
  }

  // Runs everything queued in one pool dispatch (matrix units first: they
  // are the larger ones, so attention units fill the gaps at the end), timed
  // as `op`. A single unit runs on this thread.
  void Flush(ProfileOp op) {
    ProfileScope scope(profiler_.get(), kind_, op);
    const int64_t n_mat = static_cast<int64_t>(tasks_.size());
    const int64_t n_attn = attention_.queued ? attention_unit0_.back() : 0;
    for (const MatTask& t : tasks_) {
      const int64_t rows = t.r1 - t.r0;
      matrix_bytes_read_ +=
          rows * (t.w.row_bytes() + (t.w2.data != nullptr ? t.w2.row_bytes() : 0));
    }
    const auto unit = [&](int64_t i, int thread) {
      if (i < n_mat) {
        cpu::RunMatTask(*mat_kt_, math_, c_.activation, tasks_[i]);
      } else {
        AttendUnit(i - n_mat, thread);
      }
    };
    if (n_mat + n_attn == 1) {
      unit(0, 0);
    } else if (n_mat + n_attn > 1) {
      // A reference wrapper keeps std::function from allocating per dispatch.
      pool_.ParallelFor(n_mat + n_attn, std::ref(unit));
    }
    tasks_.clear();
    attention_ = AttentionWork{};
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

  // C3: y[t] = norm(x[t]) for rows [0, n) of d_model; with `x_rows`, row t
  // of y is the norm of row x_rows[t] of x.
  void NormRows(const cpu::NormParams& norm, const float* x, float* y, int n,
                const int* x_rows = nullptr) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kNorms);
    ForRows(n, [&](int t) {
      const size_t from = static_cast<size_t>(x_rows != nullptr ? x_rows[t] : t) * d_;
      cpu::NormRow(c_.norm, kt_, x + from, norm, d_, c_.norm_eps, y + static_cast<size_t>(t) * d_);
    });
  }

  // With post_norms, writes norm(y) of rows [0, n) to a_.post and returns
  // it; otherwise returns `y` untouched.
  const float* PostNorm(const cpu::NormParams& norm, const float* y, int n) {
    if (!c_.post_norms) return y;
    NormRows(norm, y, a_.post.data(), n);
    return a_.post.data();
  }

  // q/k/v biases, q/k norm and RoPE of rows [0, n) (each at its own
  // position), then their K and V appended to layer `l`'s cache of their
  // own sequence.
  void QkRopeAppend(int l, int n) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kRopeKv);
    ForRows(n, [&](int t) {
      QkRopeAppendRow(*rows_.sequences[rows_.sequence[t]].state, l, t, rows_.position[t]);
    });
  }

  void QkRopeAppendRow(InferenceState& state, int l, int t, int pos) {
    const LayerParams& p = params_[l];
    float* q = a_.q.data() + static_cast<size_t>(t) * q_dim_;
    float* k = a_.k.data() + static_cast<size_t>(t) * kv_dim_;
    float* v = a_.v.data() + static_cast<size_t>(t) * kv_dim_;
    if (c_.qkv_bias) {
      for (int i = 0; i < q_dim_; ++i) q[i] = q[i] + p.q_bias[i];
      for (int i = 0; i < kv_dim_; ++i) k[i] = k[i] + p.k_bias[i];
      for (int i = 0; i < kv_dim_; ++i) v[i] = v[i] + p.v_bias[i];
    }
    if (c_.qk_norm) {
      for (int h = 0; h < c_.n_heads; ++h) {
        cpu::RmsNormInPlace(kt_, q + int64_t{h} * hd_, p.q_norm.data(), hd_, c_.norm_eps);
      }
      for (int h = 0; h < c_.n_kv_heads; ++h) {
        cpu::RmsNormInPlace(kt_, k + int64_t{h} * hd_, p.k_norm.data(), hd_, c_.norm_eps);
      }
    }
    if (c_.layers[l].use_rope) {
      // A sliding-window layer with its own base reads the local angles.
      const bool local = c_.rope_base_local > 0.0f && c_.layers[l].sliding_window > 0;
      const size_t at = static_cast<size_t>(t) * rope_.half();
      const float* cs = (local ? a_.cos_local : a_.cos).data() + at;
      const float* sn = (local ? a_.sin_local : a_.sin).data() + at;
      for (int h = 0; h < c_.n_heads; ++h) rope_.Apply(q + int64_t{h} * hd_, cs, sn);
      for (int h = 0; h < c_.n_kv_heads; ++h) rope_.Apply(k + int64_t{h} * hd_, cs, sn);
    }
    std::memcpy(state.k_cache[l].data() + static_cast<size_t>(pos) * kv_dim_, k,
                sizeof(float) * kv_dim_);
    std::memcpy(state.v_cache[l].data() + static_cast<size_t>(pos) * kv_dim_, v,
                sizeof(float) * kv_dim_);
  }

  // One queued attention unit: the sequence whose units hold `unit`, then
  // within them head `u / blocks` and that sequence's query rows of block
  // `u % blocks`.
  void AttendUnit(int64_t unit, int thread) {
    const auto after = std::upper_bound(attention_unit0_.begin(), attention_unit0_.end(), unit);
    const size_t seq = static_cast<size_t>(after - attention_unit0_.begin()) - 1;
    const cpu::CallSequence& s = rows_.sequences[seq];
    const int64_t u = unit - attention_unit0_[seq];
    const int blocks = (s.rows + row_block_ - 1) / row_block_;
    const int h = static_cast<int>(u / blocks);
    const int b = static_cast<int>(u % blocks);
    const int end = s.row0 + std::min(s.rows, (b + 1) * row_block_);
    for (int t = s.row0 + b * row_block_; t < end; ++t) {
      AttendRow(*s.state, attention_.layer, h, t, rows_.position[t], thread);
    }
  }

  // C5: attention of head `h` for query row `t` at position `pos`.
  void AttendRow(const InferenceState& state, int l, int h, int t, int pos, int thread) {
    const int window = c_.layers[l].sliding_window;
    const int first = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
    const int kvh = h / group_;
    cpu::AttentionRow(kt_, math_, a_.q.data() + static_cast<size_t>(t) * q_dim_ + int64_t{h} * hd_,
                      state.k_cache[l].data() + int64_t{kvh} * hd_,
                      state.v_cache[l].data() + int64_t{kvh} * hd_, kv_dim_, first, pos, hd_,
                      scale_, c_.attn_softcap, inv_attn_softcap_,
                      scores_.data() + static_cast<size_t>(thread) * scores_stride_,
                      a_.attn.data() + static_cast<size_t>(t) * q_dim_ + int64_t{h} * hd_);
  }

  // C7: router probabilities, top-k, weights of rows [0, n) from their
  // logits in probs; then the rows' slots, grouped by expert, in token order
  // within an expert. With several rows, copies each row's FFN input `fn`
  // to its slots in xe (one row's experts read `fn` directly).
  void Route(int n, const float* fn) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kRouter);
    cpu::Activations& a = a_;
    const int E = c_.n_experts, K = c_.top_k;
    for (int t = 0; t < n; ++t) {
      float* p = a.probs.data() + static_cast<size_t>(t) * E;
      cpu::SoftmaxInPlace(p, E, math_);
      int* chosen = a.chosen.data() + static_cast<size_t>(t) * K;
      float* weight = a.weight.data() + static_cast<size_t>(t) * K;
      cpu::TopK(p, E, K, chosen);
      for (int r = 0; r < K; ++r) weight[r] = p[chosen[r]];
      if (c_.renormalize_top_k) {
        const float z = numerics::Sum(weight, static_cast<size_t>(K));
        for (int r = 0; r < K; ++r) weight[r] = weight[r] / z;
      }
    }
    std::fill(a.count.begin(), a.count.begin() + E, 0);
    for (int i = 0; i < n * K; ++i) a.count[a.chosen[i]] += 1;
    a.offset[0] = 0;
    for (int e = 0; e < E; ++e) a.offset[e + 1] = a.offset[e] + a.count[e];
    std::fill(a.count.begin(), a.count.begin() + E, 0);
    for (int t = 0; t < n; ++t) {
      for (int r = 0; r < K; ++r) {
        const int e = a.chosen[t * K + r];
        const int s = a.offset[e] + a.count[e]++;
        a.slot[t * K + r] = s;
        if (n > 1) {
          std::memcpy(a.xe.data() + static_cast<size_t>(s) * d_, fn + static_cast<size_t>(t) * d_,
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
      const int cnt = a_.offset[e + 1] - a_.offset[e];
      if (cnt == 0) continue;
      const size_t s = static_cast<size_t>(a_.offset[e]);
      const float* xin = n == 1 ? fn : a_.xe.data() + s * d_;
      cpu::AppendMatTasks(cut_, xin, cnt, p.gate[e], a_.ge.data() + s * f, f, tasks_, &p.up[e],
                          a_.ue.data() + s * f, a_.he.data() + s * f);
    }
    if (c_.shared_expert_ffn_dim > 0) {
      const int sf = c_.shared_expert_ffn_dim;
      cpu::AppendMatTasks(cut_, fn, n, p.shared_gate, a_.sg.data(), sf, tasks_, &p.shared_up,
                          a_.su.data(), a_.sh.data());
    }
  }

  // Queues the experts' and the shared expert's down projections.
  void QueueExpertsOut(int l, int n) {
    const LayerParams& p = params_[l];
    const int f = c_.expert_ffn_dim;
    for (int e = 0; e < c_.n_experts; ++e) {
      const int cnt = a_.offset[e + 1] - a_.offset[e];
      if (cnt == 0) continue;
      const size_t s = static_cast<size_t>(a_.offset[e]);
      cpu::AppendMatTasks(cut_, a_.he.data() + s * f, cnt, p.down[e], a_.ye.data() + s * d_, d_,
                          tasks_);
    }
    if (c_.shared_expert_ffn_dim > 0) {
      cpu::AppendMatTasks(cut_, a_.sh.data(), n, p.shared_down, a_.ys.data(), d_, tasks_);
    }
  }

  // C7: ffn[t] = sum over ranks of fma(w_r, y_r, .), then + shared.
  void CombineExperts(int n) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kFfn);
    const int K = c_.top_k;
    for (int t = 0; t < n; ++t) {
      float* o = a_.ffn.data() + static_cast<size_t>(t) * d_;
      std::fill(o, o + d_, 0.0f);
      for (int r = 0; r < K; ++r) {
        const float w = a_.weight[t * K + r];
        const float* y = a_.ye.data() + static_cast<size_t>(a_.slot[t * K + r]) * d_;
        for (int i = 0; i < d_; ++i) o[i] = std::fma(w, y[i], o[i]);
      }
      if (c_.shared_expert_ffn_dim > 0) {
        const float* y = a_.ys.data() + static_cast<size_t>(t) * d_;
        for (int i = 0; i < d_; ++i) o[i] = o[i] + y[i];
      }
    }
  }

  // x = x + y over n rows of d_model.
  void Residual(int n, const float* y) {
    ProfileScope scope(profiler_.get(), kind_, ProfileOp::kResidual);
    float* x = a_.x.data();
    const size_t total = static_cast<size_t>(n) * d_;
    for (size_t i = 0; i < total; ++i) x[i] = x[i] + y[i];
  }

  // Output norm and projection of the output rows (each sequence's every
  // row, or its last), in one matrix pass; then each sequence's rows go to
  // its own logits (a single sequence's straight away).
  void Head() {
    const std::vector<int>& out = rows_.output_rows;
    const int rows = static_cast<int>(out.size());
    if (rows == 0) return;
    NormRows(output_norm_, a_.x.data(), a_.out_norm.data(), rows, out.data());
    TraceRows(-1, "output_norm", a_.out_norm.data(), d_, out.data(), rows);
    const size_t V = static_cast<size_t>(c_.vocab_size);
    const bool single = rows_.sequences.size() == 1;
    float* logits = single ? rows_.sequences[0].logits->data() : head_logits_.data();
    QueueMat(a_.out_norm.data(), rows, output_, logits, static_cast<int64_t>(V));
    Flush(ProfileOp::kHead);
    if (c_.logit_scale != 1.0f) {
      const float s = c_.logit_scale;
      for (size_t i = 0; i < static_cast<size_t>(rows) * V; ++i) logits[i] = logits[i] * s;
    }
    // Final soft-cap (Gemma 2): logits = tanh(logits / cap) * cap
    if (c_.final_softcap > 0.0f) {
      cpu::SoftCapInPlace(logits, static_cast<int64_t>(rows) * static_cast<int64_t>(V),
                          c_.final_softcap, 1.0f / c_.final_softcap, math_);
    }
    TraceRows(-1, "logits", logits, static_cast<int64_t>(V), out.data(), rows);
    if (single) return;
    for (const cpu::CallSequence& s : rows_.sequences) {
      std::copy_n(logits + static_cast<size_t>(s.out0) * V, static_cast<size_t>(s.outputs) * V,
                  s.logits->data());
    }
  }

  // Records one op's output for the rows of the call whose sequence is
  // traced: `data` holds `width` values per row, for every call row, or,
  // with `call_rows`, for the `rows` call rows it lists.
  void TraceRows(int layer, const char* op, const float* data, int64_t width,
                 const int* call_rows = nullptr, int rows = 0) {
    if (!rows_.any_trace) return;
    const int n = call_rows != nullptr ? rows : rows_.n;
    for (int i = 0; i < n; ++i) {
      const int t = call_rows != nullptr ? call_rows[i] : i;
      const int seq = rows_.sequence[t];
      if (rows_.sequences[seq].trace == nullptr) continue;
      trace_.Add(seq, layer, op, rows_.position[t], data + static_cast<ptrdiff_t>(i) * width,
                 width);
    }
  }

  // Sends the held trace records to their sequences' sinks (cpu_trace_buffer.h).
  void FlushTrace() {
    if (rows_.any_trace) trace_.Flush(rows_.sequences);
  }

  const ModelWeights& w_;
  const ModelConfig& c_;
  const numerics::MathLibrary& math_;
  threads::ThreadPool& pool_;
  const kernels::KernelTable& kt_;  // every ISA-specific loop
  // The matrix units' table in calls of several sequences (kt_ but in the
  // batch-invariance negative control), and the one the current call uses.
  const kernels::KernelTable& multi_sequence_kt_;
  const kernels::KernelTable* mat_kt_ = &kt_;
  cpu::RepackedMatrices repacked_;
  cpu::Cutting cut_;
  int row_block_ = 16;
  std::unique_ptr<Profiler> profiler_;
  PassKind kind_ = PassKind::kPrefill;

  int d_ = 0, hd_ = 0, q_dim_ = 0, kv_dim_ = 0, group_ = 1;
  float scale_ = 1.0f;
  float inv_attn_softcap_ = 0.0f;  // 1 / attn_softcap, when capping
  bool any_rope_ = false;
  std::vector<float> freq_factors_;  // rope_freqs (rot_dim / 2), with rope_freq_factors
  cpu::RopeTable rope_;              // rope_base
  cpu::RopeTable rope_local_;        // rope_base_local (sliding-window layers), when set
  std::vector<LayerParams> params_;
  cpu::NormParams output_norm_;
  Matrix output_;

  cpu::CallRows rows_;  // the current call's rows: sequence, position, token
  cpu::Activations a_;
  std::vector<float> head_logits_;        // (outputs, vocab) a batch's logits before the split
  std::vector<float> scores_;             // (threads, scores_stride_): attention scratch
  int64_t scores_stride_ = 0;             // positions reached by the current call
  std::vector<MatTask> tasks_;            // matrix units queued for the next Flush
  AttentionWork attention_;               // attention queued for the next Flush
  std::vector<int64_t> attention_unit0_;  // (sequences + 1) first attention unit of each
  int64_t matrix_bytes_read_ = 0;         // MatrixBytesRead

  cpu::TraceBuffer trace_;  // the current call's trace records
};

}  // namespace

std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options) {
  if (!kernels::IsaAvailable(options.isa)) {
    throw std::invalid_argument(std::string("cpu forward: ISA ") + kernels::IsaName(options.isa) +
                                " is not available on this machine or in this build");
  }
  return MakeCpuForward(weights, math, pool, options,
                        kernels::GetKernelTable(options.isa, options.quant_dot));
}

std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options,
                                        const kernels::KernelTable& kt,
                                        const kernels::KernelTable& multi_sequence_kt) {
  return std::make_unique<CpuForward>(weights, math, pool, options, kt, multi_sequence_kt);
}

std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options,
                                        const kernels::KernelTable& kt) {
  return std::make_unique<CpuForward>(weights, math, pool, options, kt, kt);
}

}  // namespace samebits::model
