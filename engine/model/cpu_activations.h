// Every buffer of one cpu-pass call, one per line with its shape. `n` is the
// call's rows (token rows: one for decode, the chunk for prefill/extend),
// `K` = top_k (0 without experts), `f` = expert_ffn_dim, `sf` = shared_expert_ffn_dim.
// Rows are laid out one after another at the width given. `Reserve` is the
// one place the shapes become sizes; buffers keep the largest size seen, so
// steady decoding allocates nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine/model/config.h"

namespace samebits::model::cpu {

struct Activations {
  std::vector<float> x;          // (n, d_model)     the residual stream
  std::vector<float> xn;         // (n, d_model)     attn_norm(x); the FFN input in a parallel block
  std::vector<float> fn;         // (n, d_model)     ffn_norm(x)
  std::vector<float> cos;        // (n, rot_dim / 2) RoPE angles of each row's position
  std::vector<float> sin;        // (n, rot_dim / 2)
  std::vector<float> cos_local;  // (n, rot_dim / 2) the same for rope_base_local (sliding layers)
  std::vector<float> sin_local;  // (n, rot_dim / 2)
  std::vector<float> q;          // (n, q_dim)       after q-norm and RoPE
  std::vector<float> k;          // (n, kv_dim)      after k-norm and RoPE
  std::vector<float> v;          // (n, kv_dim)
  std::vector<float> attn;       // (n, q_dim)       attention, before W_o
  std::vector<float> proj;       // (n, d_model)     W_o attn
  std::vector<float> ffn;        // (n, d_model)     the FFN's output
  std::vector<float> post;       // (n, d_model)     post-norm of attn_out or ffn (post_norms)
  std::vector<float> out_norm;   // (n, d_model)     output_norm(x) of the output rows
  // Dense SwiGLU FFN (layers without MoE).
  std::vector<float> gate;    // (n, ffn_dim)     W_gate fn
  std::vector<float> up;      // (n, ffn_dim)     W_up fn
  std::vector<float> hidden;  // (n, ffn_dim)     silu(gate) * up
  // Mixture of experts. A row's K choices are "slots", grouped by expert
  // (token order within an expert), so each expert runs one GEMM.
  std::vector<float> probs;   // (n, n_experts)   router probabilities
  std::vector<int> chosen;    // (n, K)           experts in rank order
  std::vector<float> weight;  // (n, K)           their combine weights
  std::vector<int> slot;      // (n, K)           each choice's slot
  std::vector<int> count;     // (n_experts)      slots per expert
  std::vector<int> offset;    // (n_experts + 1)  first slot of each expert
  std::vector<float> xe;      // (n * K, d_model) each slot's FFN input (n > 1)
  std::vector<float> ge;      // (n * K, f)       W_gate xe
  std::vector<float> ue;      // (n * K, f)       W_up xe
  std::vector<float> he;      // (n * K, f)       silu(ge) * ue
  std::vector<float> ye;      // (n * K, d_model) W_down he
  std::vector<float> sg;      // (n, sf)          shared expert: W_gate fn
  std::vector<float> su;      // (n, sf)          W_up fn
  std::vector<float> sh;      // (n, sf)          silu(sg) * su
  std::vector<float> ys;      // (n, d_model)     W_down sh

  // Sizes every buffer for `n` rows of `c` (a no-op once big enough).
  void Reserve(const ModelConfig& c, int n) {
    const size_t N = static_cast<size_t>(n), d = c.d_model;
    const size_t K = c.n_experts > 0 ? std::max(c.top_k, 1) : 0;  // no slots without experts
    const size_t q_dim = static_cast<size_t>(c.n_heads) * c.head_dim;
    const size_t kv_dim = static_cast<size_t>(c.n_kv_heads) * c.head_dim;
    const size_t half = std::max(c.rotary_dim() / 2, 1);
    const size_t E = c.n_experts, f = c.expert_ffn_dim, sf = c.shared_expert_ffn_dim;
    const size_t F = c.ffn_dim;
    Grow(x, N * d), Grow(xn, N * d), Grow(fn, N * d);
    Grow(cos, N * half), Grow(sin, N * half);
    const size_t local_half = c.rope_base_local > 0.0f ? half : 0;
    Grow(cos_local, N * local_half), Grow(sin_local, N * local_half);
    Grow(q, N * q_dim), Grow(k, N * kv_dim), Grow(v, N * kv_dim), Grow(attn, N * q_dim);
    Grow(proj, N * d), Grow(ffn, N * d), Grow(out_norm, N * d);
    Grow(post, c.post_norms ? N * d : 0);
    Grow(gate, N * F), Grow(up, N * F), Grow(hidden, N * F);
    Grow(probs, N * E), Grow(chosen, N * K), Grow(weight, N * K), Grow(slot, N * K);
    Grow(count, E), Grow(offset, E + 1);
    Grow(xe, N * K * d), Grow(ge, N * K * f), Grow(ue, N * K * f), Grow(he, N * K * f);
    Grow(ye, N * K * d);
    Grow(sg, N * sf), Grow(su, N * sf), Grow(sh, N * sf), Grow(ys, N * (sf > 0 ? d : 0));
  }

 private:
  template <typename T>
  static void Grow(std::vector<T>& buffer, size_t size) {
    if (buffer.size() < size) buffer.resize(size);
  }
};

}  // namespace samebits::model::cpu
