// CpuForward's attention (cpu_forward.h): q/k biases and norms, RoPE and
// the KV append per row, and the attention units a flush runs (C5), one per
// sequence, K/V head (with its GQA group of query heads) and block of query
// rows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/model/cpu_forward.h"

namespace samebits::model::cpu {

void CpuForward::PlanAttention() {
  attention_unit0_.assign(1, 0);
  for (const cpu::CallSequence& s : rows_.sequences) {
    const int64_t blocks = (s.rows + row_block_ - 1) / row_block_;
    attention_unit0_.push_back(attention_unit0_.back() + int64_t{c_.n_kv_heads} * blocks);
  }
}

void CpuForward::QkRopeAppend(int l, int n) {
  ProfileScope scope(profiler_.get(), kind_, ProfileOp::kRopeKv);
  ForRows(n, [&](int t) {
    QkRopeAppendRow(*rows_.sequences[rows_.sequence[t]].state, l, t, rows_.position[t]);
  });
}

void CpuForward::QkRopeAppendRow(InferenceState& state, int l, int t, int pos) {
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

void CpuForward::AttendUnit(int64_t unit, int thread) {
  const auto after = std::upper_bound(attention_unit0_.begin(), attention_unit0_.end(), unit);
  const size_t seq = static_cast<size_t>(after - attention_unit0_.begin()) - 1;
  const cpu::CallSequence& s = rows_.sequences[seq];
  const int64_t u = unit - attention_unit0_[seq];
  const int blocks = (s.rows + row_block_ - 1) / row_block_;
  const int kvh = static_cast<int>(u / blocks);
  const int b = static_cast<int>(u % blocks);
  const int end = s.row0 + std::min(s.rows, (b + 1) * row_block_);
  for (int t = s.row0 + b * row_block_; t < end; ++t) {
    AttendRow(*s.state, attention_.layer, kvh, t, rows_.position[t], thread);
  }
}

void CpuForward::AttendRow(const InferenceState& state, int l, int kvh, int t, int pos,
                           int thread) {
  const int window = c_.layers[l].sliding_window;
  const int first = window > 0 && pos - window + 1 > 0 ? pos - window + 1 : 0;
  const int64_t h0 = int64_t{kvh} * group_;  // the group's first query head
  cpu::AttentionRow(kt_, math_, a_.q.data() + static_cast<size_t>(t) * q_dim_ + h0 * hd_, group_,
                    state.k_cache[l].data() + int64_t{kvh} * hd_,
                    state.v_cache[l].data() + int64_t{kvh} * hd_, kv_dim_, first, pos, hd_, scale_,
                    c_.attn_softcap, inv_attn_softcap_,
                    scores_.data() + static_cast<size_t>(thread) * scores_stride_,
                    a_.attn.data() + static_cast<size_t>(t) * q_dim_ + h0 * hd_);
}

}  // namespace samebits::model::cpu
