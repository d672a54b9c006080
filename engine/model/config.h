// The decoder's configuration as a plain struct: one `ModelConfig` describes
// every supported architecture (llama, Mixtral-style MoE, Qwen3-MoE,
// Cohere2-style sliding/global layers). Per-layer settings live in `layers`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/numerics/dtype.h"

namespace samebits::model {

using numerics::DType;
enum class NormKind : uint8_t { kRmsNorm, kLayerNorm };
enum class RopeStyle : uint8_t { kInterleaved, kNeox };
// The FFN's gate activation: SwiGLU's SiLU, or GeGLU's GELU in tanh form (Gemma).
enum class Activation : uint8_t { kSilu, kGeluTanh };

struct LayerConfig {
  // Keys further back than `sliding_window` positions are masked (0: global).
  int sliding_window = 0;
  // Global layers in the Cohere2 style use no positional encoding.
  bool use_rope = true;
  // A Mixture-of-Experts FFN on this layer; otherwise the dense SwiGLU FFN.
  bool moe = false;

  bool operator==(const LayerConfig&) const = default;
};

struct ModelConfig {
  std::string name;  // "synthetic:tiny", a file name, ...
  std::string arch;  // "llama", "qwen3moe", "cohere2", ...

  int vocab_size = 0;
  int d_model = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;  // need not be d_model / n_heads

  NormKind norm = NormKind::kRmsNorm;
  float norm_eps = 1e-5f;

  RopeStyle rope_style = RopeStyle::kInterleaved;
  float rope_base = 10000.0f;
  int rope_dim = 0;  // rotated dimensions per head; 0 means head_dim
  // RoPE base of the sliding-window layers (Gemma 3's local layers); 0: `rope_base`.
  float rope_base_local = 0.0f;
  // A `rope_freqs` tensor (rot_dim / 2) divides each rotary frequency
  // (Llama 3.1's rope scaling as its converter writes it).
  bool rope_freq_factors = false;

  bool qk_norm = false;         // RMSNorm over each head of q and k
  bool qkv_bias = false;        // biases added to q, k and v after the projections (Qwen2)
  bool parallel_block = false;  // x + attn(norm(x)) + ffn(norm(x))
  // Norms of the attention and FFN outputs before their residuals (Gemma 2/3).
  bool post_norms = false;
  // Attention scores and final logits soft-capped as tanh(x / cap) * cap; 0: none.
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  // The embedding row is multiplied by this (Gemma: sqrt(d_model)); 1: none.
  float embedding_scale = 1.0f;
  Activation activation = Activation::kSilu;  // of the FFN gate (dense, experts, shared)

  int ffn_dim = 0;  // dense SwiGLU hidden size

  int n_experts = 0;
  int top_k = 0;
  int expert_ffn_dim = 0;
  bool renormalize_top_k = false;
  int shared_expert_ffn_dim = 0;  // 0: no shared expert

  bool tied_output = false;  // output projection is the token embedding
  float logit_scale = 1.0f;

  int max_seq_len = 4096;  // longest context a run may reach

  std::vector<LayerConfig> layers;

  // Returns the layer count.
  int n_layers() const { return static_cast<int>(layers.size()); }
  // Returns `rope_dim`, or `head_dim` when it is 0.
  int rotary_dim() const { return rope_dim > 0 ? rope_dim : head_dim; }
  // Returns layer `l`'s RoPE base: `rope_base_local` on a sliding-window
  // layer when it is set, else `rope_base`.
  float layer_rope_base(int l) const {
    return rope_base_local > 0.0f && layers[l].sliding_window > 0 ? rope_base_local : rope_base;
  }

  // Returns one message per problem, each naming the field and what would
  // fix it; empty when the configuration is valid.
  std::vector<std::string> Validate() const;

  bool operator==(const ModelConfig&) const = default;
};

}  // namespace samebits::model
