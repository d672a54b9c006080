// The forward passes. Two implementations share this interface:
// `reference` (forward_reference.cc: the contract, written for clarity) and
// `cpu` (forward_cpu.cc: blocked, SIMD, threaded). Tests pin `cpu` against
// `reference` bit for bit.
//
// One call handles prefill (an empty state, many tokens), decode (one token)
// and extend (a chunk into a live state): the tokens go in at positions
// `state.n_past ...`, the KV cache grows, and logits come out for the last
// position or for every position.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"
#include "engine/threads/thread_pool.h"

namespace samebits::model {

// The live state of one sequence: the KV cache of every layer, in f32,
// k and v after RoPE, `[position][n_kv_heads * head_dim]` per layer.
// Sliding windows are applied as a mask at attention time.
struct InferenceState {
  int n_past = 0;
  std::vector<std::vector<float>> k_cache;  // per layer
  std::vector<std::vector<float>> v_cache;  // per layer
};

// Returns an empty state sized for `config`'s layers.
InferenceState MakeState(const ModelConfig& config);

// Gives every KV cache of `state` room for `positions` positions of
// `config`'s rows without changing what it holds, and faults the room in
// (platform/prefault.h), so that appending up to there allocates nothing and
// takes no page fault. Like llama.cpp's KV cache, which is allocated for its
// whole context at the start. Does nothing to a cache with room already.
void ReserveCachePositions(const ModelConfig& config, InferenceState& state, int64_t positions);

// Checks what Forward::Run is given, for both passes alike: every token id
// is inside the vocabulary, the context fits in max_seq_len, and `state`
// has one K and one V cache of n_past rows per layer of `weights`.
// Throws std::invalid_argument naming the model and the problem.
void CheckRunInputs(const ModelWeights& weights, const InferenceState& state,
                    std::span<const int32_t> tokens);

// Receives an activation trace: the hidden state after each op, one call per
// token row, so that traces compare across batching. `layer` is -1 for
// model-level ops ("embed", "output_norm", "logits").
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void Record(int layer, const char* op, int position, const float* data, int64_t n) = 0;
};

// The op names a trace may carry, in the order a layer produces them.
// What each record holds (forward_reference.cc is the definition):
//   "attn_norm" norm(x) (d_model); "q" (n_heads * head_dim) and "k"
//   (n_kv_heads * head_dim) after q/k norm and RoPE; "v" (n_kv_heads *
//   head_dim); "attn" the attention output before W_o (n_heads * head_dim);
//   "attn_out" W_o attn (d_model); "attn_residual" x + attn_out (d_model);
//   "ffn_norm" (d_model, absent in parallel blocks); "router" the router
//   probabilities after softmax (n_experts, MoE layers only); "ffn" the FFN
//   output, shared expert included (d_model); "ffn_residual" the layer's
//   output (d_model). "output_norm" and "logits" come only for rows whose
//   logits are requested.
inline constexpr const char* kTraceOps[] = {
    "attn_norm",     "q",        "k",      "v",   "attn",        "attn_out",
    "attn_residual", "ffn_norm", "router", "ffn", "ffn_residual"};

enum class KernelPath : uint8_t { kReference, kCpu };
// Returns "reference" or "cpu".
const char* KernelPathName(KernelPath path);
bool ParseKernelPath(const std::string& name, KernelPath* out);

// Per-process switches for the cpu path (read once at start-up).
struct CpuOptions {
  kernels::Isa isa = kernels::Isa::kScalar;
  // How quantized matrices are multiplied (numerics/int8_dot.h).
  numerics::QuantDot quant_dot = numerics::QuantDot::kExact;
  // Bytes of weights per GEMV work unit (decode); rounded to whole rows.
  int64_t gemv_chunk_bytes = int64_t{256} * 1024;
  // GEMM output tile (prefill/extend): rows of x by rows of W.
  int64_t gemm_tile_m = 64;
  int64_t gemm_tile_n = 64;
  // Query rows per attention work unit (prefill/extend).
  int64_t attention_row_block = 16;
  // How far ahead the integer profile's loops hint the weight stream into
  // cache (kernels.h's StreamAheadBytes).
  int64_t stream_ahead_bytes = kernels::kDefaultStreamAheadBytes;
  // (Every one of these five is a tuning knob, model/tuning.h: any value
  // gives the same bits.)
  // Per-op timing, printed by the caller at the end (reads clocks only).
  bool profile = false;
};

// One sequence's part of a batched forward call (Forward::RunBatch): feed
// `tokens` into `*state` at positions state->n_past ..., write its logits
// (the last position, or every position when `all_positions`) to `*logits`
// (resized) and, when `trace` is set, its activation trace to `trace`.
struct SequenceCall {
  InferenceState* state = nullptr;
  std::span<const int32_t> tokens;
  bool all_positions = false;
  std::vector<float>* logits = nullptr;
  TraceSink* trace = nullptr;
};

// Checks a batch for RunBatch: every call has a state and a logits vector,
// passes CheckRunInputs, and no state appears twice. Throws
// std::invalid_argument naming the call (its index in the batch).
void CheckBatchInputs(const ModelWeights& weights, std::span<const SequenceCall> calls);

class Forward {
 public:
  virtual ~Forward() = default;

  // Feeds every call's tokens into its own state, as one forward call over
  // the rows of all of them (the cpu pass: each weight matrix read once for
  // all rows), and writes each call's logits and trace. Each sequence's
  // results are those of Run alone, bit for bit (clause 7 of the contract):
  // the other rows of the batch change no bit of them. Throws
  // std::invalid_argument as CheckBatchInputs does; nothing is fed then.
  virtual void RunBatch(std::span<const SequenceCall> calls) = 0;

  // Feeds `tokens` at positions state.n_past ... and advances the state.
  // Writes `vocab_size` logits per output row to `logits` (resized): the
  // last position only, or every position when `all_positions`: RunBatch
  // of one call. Throws std::invalid_argument for a bad token id or a
  // context longer than `max_seq_len`.
  void Run(InferenceState& state, std::span<const int32_t> tokens, bool all_positions,
           std::vector<float>& logits, TraceSink* trace) {
    const SequenceCall call{&state, tokens, all_positions, &logits, trace};
    RunBatch(std::span<const SequenceCall>(&call, 1));
  }

  // Returns per-op timings as text (empty unless profiling was requested).
  virtual std::string ProfileReport() const { return {}; }

  // Returns the weight bytes the matrix work read since the pass was made:
  // over every matrix unit run, its weight rows times their bytes (a fused
  // unit's two matrices both count; attention and the KV cache do not). 0
  // when the pass does not count (the reference).
  virtual int64_t MatrixBytesRead() const { return 0; }
};

// Returns the reference pass for `weights` (which must outlive it). Its dot
// products (C1) run on `isa`'s kernel table, which the contract makes
// bit-identical to every other; the rest is plain scalar code. Throws
// std::invalid_argument when `isa` is not available here.
std::unique_ptr<Forward> MakeReferenceForward(
    const ModelWeights& weights, const numerics::MathLibrary& math,
    kernels::Isa isa = kernels::BestIsa(),
    numerics::QuantDot quant_dot = numerics::QuantDot::kExact);

// Returns the fast pass computing with `kernels::GetKernelTable(options.isa)`;
// `pool` must outlive it. Throws std::invalid_argument when the ISA is not
// available here.
std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options);

// Returns the fast pass computing with `kt` instead (options.isa is then
// unused): a table from kernels::GetKernelTable, or in negative controls
// the test-only one (engine/kernels/test_only_table.h). `kt` must outlive it.
std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options,
                                        const kernels::KernelTable& kt);

// As above, but the matrix units of a call holding rows of more than one
// sequence run on `multi_sequence_kt`. In production both tables are the
// same; the batch-invariance negative control passes a test-only table
// whose reduction is split (engine/kernels/test_only_table.h), so only
// batched calls change. Both must outlive the pass.
std::unique_ptr<Forward> MakeCpuForward(const ModelWeights& weights,
                                        const numerics::MathLibrary& math,
                                        threads::ThreadPool& pool, const CpuOptions& options,
                                        const kernels::KernelTable& kt,
                                        const kernels::KernelTable& multi_sequence_kt);

}  // namespace samebits::model
