// CpuForward's construction and sizing (cpu_forward.h): every layer's
// matrices and norm weights resolved once, the integer profile's repacked
// copies, and per call the activations, the attention scratch and each
// sequence's KV caches, sized by the positions the call reaches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/cpu_forward.h"

namespace samebits::model::cpu {

CpuForward::CpuForward(const ModelWeights& w, const numerics::MathLibrary& math,
                       threads::ThreadPool& pool, const CpuOptions& options,
                       const kernels::KernelTable& kt,
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
  stream_ahead_bytes_ = options.stream_ahead_bytes;  // SetStreamAheadBytes bounds it
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
      rope_local_ =
          cpu::RopeTable(c_.rotary_dim(), c_.rope_style, c_.rope_base_local, math_, freq_factors_);
    }
  }
  LoadParams();
}

void CpuForward::LoadParams() {
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

void CpuForward::RepackForDecode() {
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

PassKind CpuForward::KindOf(const cpu::CallRows& rows) {
  bool all_empty = true, all_single = true;
  for (const cpu::CallSequence& s : rows.sequences) {
    all_empty = all_empty && s.n_past == 0;
    all_single = all_single && s.rows == 1;
  }
  return all_empty ? PassKind::kPrefill : (all_single ? PassKind::kDecode : PassKind::kExtend);
}

void CpuForward::Reserve() {
  const int64_t positions = rows_.positions_reached;
  try {
    a_.Reserve(c_, rows_.n);
    if (rows_.sequences.size() > 1) {
      const size_t outputs = rows_.output_rows.size() * static_cast<size_t>(c_.vocab_size);
      if (head_logits_.size() < outputs) head_logits_.resize(outputs);
    }
    scores_stride_ = int64_t{group_} * positions;  // a GQA group's heads (AttendRow)
    const size_t scores = static_cast<size_t>(pool_.size()) * static_cast<size_t>(scores_stride_);
    if (scores_.size() < scores) scores_.resize(scores);
    for (const cpu::CallSequence& s : rows_.sequences) {
      GrowCaches(*s.state, int64_t{s.n_past} + s.rows);
    }
  } catch (const std::bad_alloc&) {
    throw std::runtime_error(OutOfMemoryMessage());
  }
}

std::string CpuForward::OutOfMemoryMessage() const {
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
         " positions (the KV cache alone needs " + kv_mib(rows_.positions_reached) + per_position +
         "; run fewer positions or on a machine with more memory";
}

void CpuForward::GrowCaches(InferenceState& state, int64_t positions) {
  const size_t need = static_cast<size_t>(positions) * kv_dim_;
  size_t room = need;  // the fewest positions' room of any cache, in floats
  for (auto* caches : {&state.k_cache, &state.v_cache}) {
    for (const auto& cache : *caches) room = std::min(room, cache.capacity());
  }
  if (room < need) {
    // Double (at least 256 positions), so a long decode reallocates
    // rarely; the new room is faulted in at once, not a page per append.
    const int64_t room_positions = kv_dim_ > 0 ? static_cast<int64_t>(room / kv_dim_) : 0;
    ReserveCachePositions(c_, state, std::max({positions, 2 * room_positions, int64_t{256}}));
  }
  for (auto* caches : {&state.k_cache, &state.v_cache}) {
    for (auto& cache : *caches) cache.resize(need);
  }
}

}  // namespace samebits::model::cpu
