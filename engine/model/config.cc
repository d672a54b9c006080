#include "engine/model/config.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace samebits::model {
namespace {

// Collects messages of the form "<config name>: <field> <problem>; <fix>".
class Problems {
 public:
  explicit Problems(const std::string& model_name)
      : prefix_(model_name.empty() ? std::string("model config: ") : model_name + ": ") {}

  void Add(const std::string& message) { list_.push_back(prefix_ + message); }

  // Adds "`field` is V; it must be positive (...)" when `value` <= 0.
  void RequirePositive(const char* field, int value, const char* what) {
    if (value <= 0) {
      Add(std::string("`") + field + "` is " + std::to_string(value) + "; it must be positive (" +
          what + ")");
    }
  }

  std::vector<std::string> Take() { return std::move(list_); }

 private:
  std::string prefix_;
  std::vector<std::string> list_;
};

}  // namespace

std::vector<std::string> ModelConfig::Validate() const {
  Problems p(name);
  p.RequirePositive("vocab_size", vocab_size, "the number of token ids");
  p.RequirePositive("d_model", d_model, "the width of the residual stream");
  p.RequirePositive("n_heads", n_heads, "the number of query heads");
  p.RequirePositive("n_kv_heads", n_kv_heads,
                    "the number of key/value heads; set it to "
                    "`n_heads` for multi-head attention");
  p.RequirePositive("head_dim", head_dim, "the width of one attention head");
  p.RequirePositive("max_seq_len", max_seq_len, "the longest context a run may reach");

  if (n_heads > 0 && n_kv_heads > 0 && n_heads % n_kv_heads != 0) {
    p.Add("`n_heads` (" + std::to_string(n_heads) + ") is not a multiple of `n_kv_heads` (" +
          std::to_string(n_kv_heads) +
          "); grouped-query attention needs every key/value head to serve the same number of "
          "query heads, so choose `n_kv_heads` dividing `n_heads`");
  }
  if (rope_dim < 0) {
    p.Add("`rope_dim` is " + std::to_string(rope_dim) +
          "; use 0 to rotate the whole head or a positive even number <= `head_dim`");
  } else if (head_dim > 0) {
    const int rot = rotary_dim();
    if (rot % 2 != 0) {
      p.Add("the rotary dimension (" + std::to_string(rot) +
            ", from `rope_dim`, or `head_dim` when `rope_dim` is 0) is odd; RoPE rotates pairs, "
            "so make it even");
    }
    if (rot > head_dim) {
      p.Add("`rope_dim` (" + std::to_string(rope_dim) + ") exceeds `head_dim` (" +
            std::to_string(head_dim) + "); set `rope_dim` <= `head_dim`, or 0 for all of it");
    }
  }
  // `!(x > 0)` also rejects NaN.
  if (!(norm_eps > 0.0f) || std::isinf(norm_eps)) {
    p.Add("`norm_eps` is " + std::to_string(norm_eps) +
          "; it must be a positive finite number (typically 1e-5 or 1e-6)");
  }
  if (!(rope_base > 1.0f) || std::isinf(rope_base)) {
    p.Add("`rope_base` is " + std::to_string(rope_base) +
          "; it must be a finite number greater than 1 (typically 10000 or 1e6)");
  }
  if (!(logit_scale != 0.0f) || std::isnan(logit_scale) || std::isinf(logit_scale)) {
    p.Add("`logit_scale` is " + std::to_string(logit_scale) +
          "; it must be finite and non-zero (1 means no scaling)");
  }
  if (layers.empty()) {
    p.Add("`layers` is empty; a decoder needs at least one layer");
  }
  if (rope_base_local != 0.0f && (!(rope_base_local > 1.0f) || std::isinf(rope_base_local))) {
    p.Add("`rope_base_local` is " + std::to_string(rope_base_local) +
          "; use 0 for `rope_base` on every layer or a finite number greater than 1");
  }
  for (const auto& [field, cap] :
       {std::pair{"attn_softcap", attn_softcap}, std::pair{"final_softcap", final_softcap}}) {
    if (!(cap >= 0.0f) || std::isinf(cap)) {
      p.Add(std::string("`") + field + "` is " + std::to_string(cap) +
            "; use 0 for no soft-capping or a positive finite cap (Gemma 2: 50 and 30)");
    }
  }
  if (!(embedding_scale != 0.0f) || std::isnan(embedding_scale) || std::isinf(embedding_scale)) {
    p.Add("`embedding_scale` is " + std::to_string(embedding_scale) +
          "; it must be finite and non-zero (1 means no scaling)");
  }

  bool any_moe = false, any_dense = false;
  for (size_t i = 0; i < layers.size(); ++i) {
    const LayerConfig& l = layers[i];
    any_moe = any_moe || l.moe;
    any_dense = any_dense || !l.moe;
    if (l.sliding_window < 0) {
      p.Add("`layers[" + std::to_string(i) + "].sliding_window` is " +
            std::to_string(l.sliding_window) + "; use 0 for a global layer or a positive window");
    }
  }
  if (any_dense && ffn_dim <= 0) {
    p.Add("`ffn_dim` is " + std::to_string(ffn_dim) +
          " but some layers are dense (`moe` = false); give the dense SwiGLU hidden size");
  }
  if (any_moe) {
    if (n_experts <= 0) {
      p.Add("`n_experts` is " + std::to_string(n_experts) +
            " but some layers have `moe` = true; give the expert count or make the layers dense");
    }
    if (top_k <= 0) {
      p.Add("`top_k` is " + std::to_string(top_k) +
            " but some layers are MoE; each token needs at least one expert");
    } else if (n_experts > 0 && top_k > n_experts) {
      p.Add("`top_k` (" + std::to_string(top_k) + ") exceeds `n_experts` (" +
            std::to_string(n_experts) + "); choose `top_k` <= `n_experts`");
    }
    if (expert_ffn_dim <= 0) {
      p.Add("`expert_ffn_dim` is " + std::to_string(expert_ffn_dim) +
            " but some layers are MoE; give the hidden size of one expert");
    }
  }
  if (shared_expert_ffn_dim < 0) {
    p.Add("`shared_expert_ffn_dim` is " + std::to_string(shared_expert_ffn_dim) +
          "; use 0 for no shared expert or a positive hidden size");
  }
  if (!any_moe && (shared_expert_ffn_dim > 0 || n_experts > 0)) {
    p.Add(
        "`n_experts`/`shared_expert_ffn_dim` are set but no layer has `moe` = true; mark the "
        "MoE layers or clear the expert fields");
  }
  return p.Take();
}

}  // namespace samebits::model
