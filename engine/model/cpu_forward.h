// The fast forward pass's one class (forward_cpu.cc's opening comment says
// how a call runs). Its member functions live in four files, one job each:
//   forward_cpu.cc            a call: its layers' steps, the matrix units and
//                             their flushes, norms, the head, the trace;
//   forward_cpu_setup.cc      construction and sizing: every layer's weights
//                             resolved once, repacking, the activations,
//                             scratch and KV caches sized for each call;
//   forward_cpu_attention.cc  q/k norm, RoPE and the KV append, and the
//                             attention units;
//   forward_cpu_experts.cc    routing, the experts' matrix units and their
//                             combine.
// The split runs along whole steps: the loops that dominate a call are in
// the kernels (engine/kernels) either way.
//
// Internal to engine/model: the engine builds it through MakeCpuForward
// (forward.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model/cpu_activations.h"
#include "engine/model/cpu_call_rows.h"
#include "engine/model/cpu_ops.h"
#include "engine/model/cpu_quantized_inputs.h"
#include "engine/model/cpu_trace_buffer.h"
#include "engine/model/cpu_work.h"
#include "engine/model/forward.h"
#include "engine/model/profile.h"

namespace samebits::model::cpu {

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
             const kernels::KernelTable& multi_sequence_kt);

  void RunBatch(std::span<const SequenceCall> calls) override;

  std::string ProfileReport() const override {
    return profiler_ ? profiler_->Report() : std::string();
  }

  int64_t MatrixBytesRead() const override { return matrix_bytes_read_; }

 private:
  // A call's steps (forward_cpu.cc).

  // One layer over the call's `n` rows (rows_ holds each one's sequence and
  // position): the steps of forward_reference.cc's Layer, in its order, with
  // a parallel block's FFN queued beside its attention.
  void Layer(int l, int n);

  // Embedding x[t] = E[token t] (n, d_model), and the RoPE angles of each
  // row's position, once per position (n, rot_dim / 2).
  void Embed();

  // Queues y = W x for `m` rows of x (width w.cols) into y (width `ldy`).
  void QueueMat(const float* x, int m, const Matrix& w, float* y, int64_t ldy);

  // Queues the FFN's first matrices over `in`: the router's logits (MoE), or
  // the dense gate and up fused with SwiGLU.
  void QueueFfnIn(int l, int n, const float* in);

  // Queues the FFN's last matrices: the experts' down projections (MoE), or
  // the dense down projection into ffn.
  void QueueFfnOut(int l, int n);

  // Runs everything queued in one pool dispatch (matrix units first: they
  // are the larger ones, so attention units fill the gaps at the end), timed
  // as `op`. A single unit runs on this thread.
  void Flush(ProfileOp op);

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
                const int* x_rows = nullptr);

  // With post_norms, writes norm(y) of rows [0, n) to a_.post and returns
  // it; otherwise returns `y` untouched.
  const float* PostNorm(const cpu::NormParams& norm, const float* y, int n);

  // x = x + y over n rows of d_model.
  void Residual(int n, const float* y);

  // Output norm and projection of the output rows (each sequence's every
  // row, or its last), in one matrix pass; then each sequence's rows go to
  // its own logits (a single sequence's straight away).
  void Head();

  // Records one op's output for the rows of the call whose sequence is
  // traced: `data` holds `width` values per row, for every call row, or,
  // with `call_rows`, for the `rows` call rows it lists.
  void TraceRows(int layer, const char* op, const float* data, int64_t width,
                 const int* call_rows = nullptr, int rows = 0);

  // Sends the held trace records to their sequences' sinks (cpu_trace_buffer.h).
  void FlushTrace();

  // Construction and sizing (forward_cpu_setup.cc).

  // Resolves every layer's matrices and norm weights once (names the
  // tensor when one is missing or misshapen).
  void LoadParams();

  // Gives every matrix a table can decode repacked its repacked copy
  // (kernels/int8_repack.h): the integer profile's Q4_K on AVX-512. The
  // same bits as the original rows, sixteen rows to a vector.
  void RepackForDecode();

  // Returns the profiler's name for a call: prefill when every sequence
  // starts empty, decode when each feeds one row, else extend.
  static PassKind KindOf(const cpu::CallRows& rows);

  // Sizes the activations for the call's rows, the attention scratch for
  // the positions it reaches, and every layer's KV cache of each sequence
  // for its own. Sizes follow the need only: a checkpoint claiming a context
  // of 2^31 - 1 positions reserves nothing for the positions a run does
  // not reach.
  void Reserve();

  // Returns what ran out of memory in Reserve: the positions of one
  // sequence, or, when the call decodes several, the batch (its sequences
  // and all their positions: one sequence's positions would blame the
  // scenario for what the batch asked).
  std::string OutOfMemoryMessage() const;

  // Sizes every layer's cache for `positions` positions. The capacity grows
  // geometrically (to at most twice the need), so decoding reallocates
  // rarely; growth copies the rows already there, so no bit changes, and
  // faults the new room in at once (ReserveCachePositions), so that no
  // append takes a page fault of its own.
  void GrowCaches(InferenceState& state, int64_t positions);

  // Attention (forward_cpu_attention.cc).

  // Numbers the call's attention units: sequence s owns units
  // [attention_unit0_[s], attention_unit0_[s + 1]), one per K/V head (with
  // every query head of its GQA group) and block of its rows.
  void PlanAttention();

  // q/k/v biases, q/k norm and RoPE of rows [0, n) (each at its own
  // position), then their K and V appended to layer `l`'s cache of their
  // own sequence.
  void QkRopeAppend(int l, int n);

  void QkRopeAppendRow(InferenceState& state, int l, int t, int pos);

  // One queued attention unit: the sequence whose units hold `unit`, then
  // within them K/V head `u / blocks` and that sequence's query rows of
  // block `u % blocks`.
  void AttendUnit(int64_t unit, int thread);

  // C5: attention of the query heads that share K/V head `kvh` (its GQA
  // group, read once for all of them) for query row `t` at position `pos`.
  void AttendRow(const InferenceState& state, int l, int kvh, int t, int pos, int thread);

  // The experts (forward_cpu_experts.cc).

  // C7: router probabilities, top-k, weights of rows [0, n) from their
  // logits in probs; then the rows' slots, grouped by expert, in token order
  // within an expert. With several rows, copies each row's FFN input `fn`
  // to its slots in xe (one row's experts read `fn` directly).
  void Route(int n, const float* fn);

  // Queues the experts' gate/up (fused with SwiGLU) for the routed rows, and
  // the shared expert's. With one row, the experts read `fn` directly.
  void QueueExpertsIn(int l, int n, const float* fn);

  // Queues the experts' and the shared expert's down projections.
  void QueueExpertsOut(int l, int n);

  // C7: ffn[t] = sum over ranks of fma(w_r, y_r, .), then + shared.
  void CombineExperts(int n);

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
  int64_t stream_ahead_bytes_ = kernels::kDefaultStreamAheadBytes;  // set per call (RunBatch)
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
  int64_t scores_stride_ = 0;             // a GQA group x the positions the call reaches
  std::vector<MatTask> tasks_;            // matrix units queued for the next Flush
  AttentionWork attention_;               // attention queued for the next Flush
  std::vector<int64_t> attention_unit0_;  // (sequences + 1) first attention unit of each
  int64_t matrix_bytes_read_ = 0;         // MatrixBytesRead
  // The int8 inputs of the units of a Flush, each quantized once there.
  cpu::QuantizedInputs quantized_inputs_;

  cpu::TraceBuffer trace_;  // the current call's trace records
};

}  // namespace samebits::model::cpu
