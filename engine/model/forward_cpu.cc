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
// attention units (one per sequence, K/V head and block of query rows). A
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
//
// This file holds a call's steps; cpu_forward.h says where the rest is.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/cpu_forward.h"

namespace samebits::model::cpu {

void CpuForward::RunBatch(std::span<const SequenceCall> calls) {
  CheckBatchInputs(w_, calls);
  rows_.Assign(calls);
  int fed = 0;  // sequences with rows in this call
  for (const cpu::CallSequence& s : rows_.sequences) {
    s.logits->resize(static_cast<size_t>(s.outputs) * c_.vocab_size);
    fed += s.rows > 0 ? 1 : 0;
  }
  const int n = rows_.n;
  if (n == 0) return;
  // Process-wide in the kernels, so set per call: two passes in one
  // process (tune's candidates, timed interleaved) each run with their own.
  kernels::SetStreamAheadBytes(stream_ahead_bytes_);
  mat_kt_ = fed > 1 ? &multi_sequence_kt_ : &kt_;
  kind_ = KindOf(rows_);
  if (profiler_) profiler_->CountPass(kind_, n);
  const auto pass_start = profiler_ ? Profiler::Clock::now() : Profiler::Clock::time_point{};
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
  if (profiler_) profiler_->AddPassTime(kind_, Profiler::NanosecondsSince(pass_start));
}

void CpuForward::Layer(int l, int n) {
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

void CpuForward::Embed() {
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

void CpuForward::QueueMat(const float* x, int m, const Matrix& w, float* y, int64_t ldy) {
  cpu::AppendMatTasks(cut_, x, m, w, y, ldy, tasks_);
}

void CpuForward::QueueFfnIn(int l, int n, const float* in) {
  const LayerParams& p = params_[l];
  if (c_.layers[l].moe) {
    QueueMat(in, n, p.router, a_.probs.data(), c_.n_experts);
  } else {
    cpu::AppendMatTasks(cut_, in, n, p.ffn_gate, a_.gate.data(), c_.ffn_dim, tasks_, &p.ffn_up,
                        a_.up.data(), a_.hidden.data());
  }
}

void CpuForward::QueueFfnOut(int l, int n) {
  if (c_.layers[l].moe) {
    QueueExpertsOut(l, n);
  } else {
    QueueMat(a_.hidden.data(), n, params_[l].ffn_down, a_.ffn.data(), d_);
  }
}

void CpuForward::Flush(ProfileOp op) {
  ProfileScope scope(profiler_.get(), kind_, op);
  const int64_t n_mat = static_cast<int64_t>(tasks_.size());
  const int64_t n_attn = attention_.queued ? attention_unit0_.back() : 0;
  for (const MatTask& t : tasks_) {
    const int64_t rows = t.r1 - t.r0;
    matrix_bytes_read_ += rows * (t.w.row_bytes() + (t.w2.data != nullptr ? t.w2.row_bytes() : 0));
  }
  quantized_inputs_.Prepare(*mat_kt_, tasks_, pool_);
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

void CpuForward::NormRows(const cpu::NormParams& norm, const float* x, float* y, int n,
                          const int* x_rows) {
  ProfileScope scope(profiler_.get(), kind_, ProfileOp::kNorms);
  ForRows(n, [&](int t) {
    const size_t from = static_cast<size_t>(x_rows != nullptr ? x_rows[t] : t) * d_;
    cpu::NormRow(c_.norm, kt_, x + from, norm, d_, c_.norm_eps, y + static_cast<size_t>(t) * d_);
  });
}

const float* CpuForward::PostNorm(const cpu::NormParams& norm, const float* y, int n) {
  if (!c_.post_norms) return y;
  NormRows(norm, y, a_.post.data(), n);
  return a_.post.data();
}

void CpuForward::Residual(int n, const float* y) {
  ProfileScope scope(profiler_.get(), kind_, ProfileOp::kResidual);
  float* x = a_.x.data();
  const size_t total = static_cast<size_t>(n) * d_;
  for (size_t i = 0; i < total; ++i) x[i] = x[i] + y[i];
}

void CpuForward::Head() {
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

void CpuForward::TraceRows(int layer, const char* op, const float* data, int64_t width,
                           const int* call_rows, int rows) {
  if (!rows_.any_trace) return;
  const int n = call_rows != nullptr ? rows : rows_.n;
  for (int i = 0; i < n; ++i) {
    const int t = call_rows != nullptr ? call_rows[i] : i;
    const int seq = rows_.sequence[t];
    if (rows_.sequences[seq].trace == nullptr) continue;
    trace_.Add(seq, layer, op, rows_.position[t], data + static_cast<ptrdiff_t>(i) * width, width);
  }
}

void CpuForward::FlushTrace() {
  if (rows_.any_trace) trace_.Flush(rows_.sequences);
}

}  // namespace samebits::model::cpu

namespace samebits::model {

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
  return std::make_unique<cpu::CpuForward>(weights, math, pool, options, kt, multi_sequence_kt);
}

std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options,
                                        const kernels::KernelTable& kt) {
  return std::make_unique<cpu::CpuForward>(weights, math, pool, options, kt, kt);
}

}  // namespace samebits::model
