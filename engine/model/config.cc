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

// The checks of ModelConfig::Validate, one part of the configuration each.

// The sizes every model needs, and grouped-query attention's head ratio.
void CheckShape(const ModelConfig& c, Problems& p) {
  p.RequirePositive("vocab_size", c.vocab_size, "the number of token ids");
  p.RequirePositive("d_model", c.d_model, "the width of the residual stream");
  p.RequirePositive("n_heads", c.n_heads, "the number of query heads");
  p.RequirePositive("n_kv_heads", c.n_kv_heads,
                    "the number of key/value heads; set it to "
                    "`n_heads` for multi-head attention");
  p.RequirePositive("head_dim", c.head_dim, "the width of one attention head");
  p.RequirePositive("max_seq_len", c.max_seq_len, "the longest context a run may reach");

  if (c.n_heads > 0 && c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads != 0) {
    p.Add("`n_heads` (" + std::to_string(c.n_heads) + ") is not a multiple of `n_kv_heads` (" +
          std::to_string(c.n_kv_heads) +
          "); grouped-query attention needs every key/value head to serve the same number of "
          "query heads, so choose `n_kv_heads` dividing `n_heads`");
  }
}

// The rotary dimension: even and within the head.
void CheckRope(const ModelConfig& c, Problems& p) {
  if (c.rope_dim < 0) {
    p.Add("`rope_dim` is " + std::to_string(c.rope_dim) +
          "; use 0 to rotate the whole head or a positive even number <= `head_dim`");
  } else if (c.head_dim > 0) {
    const int rot = c.rotary_dim();
    if (rot % 2 != 0) {
      p.Add("the rotary dimension (" + std::to_string(rot) +
            ", from `rope_dim`, or `head_dim` when `rope_dim` is 0) is odd; RoPE rotates pairs, "
            "so make it even");
    }
    if (rot > c.head_dim) {
      p.Add("`rope_dim` (" + std::to_string(c.rope_dim) + ") exceeds `head_dim` (" +
            std::to_string(c.head_dim) + "); set `rope_dim` <= `head_dim`, or 0 for all of it");
    }
  }
}

// The scalars: finite and in range.
void CheckScalars(const ModelConfig& c, Problems& p) {
  // `!(x > 0)` also rejects NaN.
  if (!(c.norm_eps > 0.0f) || std::isinf(c.norm_eps)) {
    p.Add("`norm_eps` is " + std::to_string(c.norm_eps) +
          "; it must be a positive finite number (typically 1e-5 or 1e-6)");
  }
  if (!(c.rope_base > 1.0f) || std::isinf(c.rope_base)) {
    p.Add("`rope_base` is " + std::to_string(c.rope_base) +
          "; it must be a finite number greater than 1 (typically 10000 or 1e6)");
  }
  if (!(c.logit_scale != 0.0f) || std::isnan(c.logit_scale) || std::isinf(c.logit_scale)) {
    p.Add("`logit_scale` is " + std::to_string(c.logit_scale) +
          "; it must be finite and non-zero (1 means no scaling)");
  }
}

// The layers, the scalars of Gemma's operations, and the feed-forward
// widths, dense and MoE (in the order Validate has always listed them).
void CheckLayersAndFeedForward(const ModelConfig& c, Problems& p) {
  if (c.layers.empty()) {
    p.Add("`layers` is empty; a decoder needs at least one layer");
  }
  if (c.rope_base_local != 0.0f && (!(c.rope_base_local > 1.0f) || std::isinf(c.rope_base_local))) {
    p.Add("`rope_base_local` is " + std::to_string(c.rope_base_local) +
          "; use 0 for `rope_base` on every layer or a finite number greater than 1");
  }
  for (const auto& [field, cap] :
       {std::pair{"attn_softcap", c.attn_softcap}, std::pair{"final_softcap", c.final_softcap}}) {
    if (!(cap >= 0.0f) || std::isinf(cap)) {
      p.Add(std::string("`") + field + "` is " + std::to_string(cap) +
            "; use 0 for no soft-capping or a positive finite cap (Gemma 2: 50 and 30)");
    }
  }
  if (!(c.embedding_scale != 0.0f) || std::isnan(c.embedding_scale) ||
      std::isinf(c.embedding_scale)) {
    p.Add("`embedding_scale` is " + std::to_string(c.embedding_scale) +
          "; it must be finite and non-zero (1 means no scaling)");
  }

  bool any_moe = false, any_dense = false;
  for (size_t i = 0; i < c.layers.size(); ++i) {
    const LayerConfig& l = c.layers[i];
    any_moe = any_moe || l.moe;
    any_dense = any_dense || !l.moe;
    if (l.sliding_window < 0) {
      p.Add("`layers[" + std::to_string(i) + "].sliding_window` is " +
            std::to_string(l.sliding_window) + "; use 0 for a global layer or a positive window");
    }
  }
  if (any_dense && c.ffn_dim <= 0) {
    p.Add("`ffn_dim` is " + std::to_string(c.ffn_dim) +
          " but some layers are dense (`moe` = false); give the dense SwiGLU hidden size");
  }
  if (any_moe) {
    if (c.n_experts <= 0) {
      p.Add("`n_experts` is " + std::to_string(c.n_experts) +
            " but some layers have `moe` = true; give the expert count or make the layers dense");
    }
    if (c.top_k <= 0) {
      p.Add("`top_k` is " + std::to_string(c.top_k) +
            " but some layers are MoE; each token needs at least one expert");
    } else if (c.n_experts > 0 && c.top_k > c.n_experts) {
      p.Add("`top_k` (" + std::to_string(c.top_k) + ") exceeds `n_experts` (" +
            std::to_string(c.n_experts) + "); choose `top_k` <= `n_experts`");
    }
    if (c.expert_ffn_dim <= 0) {
      p.Add("`expert_ffn_dim` is " + std::to_string(c.expert_ffn_dim) +
            " but some layers are MoE; give the hidden size of one expert");
    }
  }
  if (c.shared_expert_ffn_dim < 0) {
    p.Add("`shared_expert_ffn_dim` is " + std::to_string(c.shared_expert_ffn_dim) +
          "; use 0 for no shared expert or a positive hidden size");
  }
  if (!any_moe && (c.shared_expert_ffn_dim > 0 || c.n_experts > 0)) {
    p.Add(
        "`n_experts`/`shared_expert_ffn_dim` are set but no layer has `moe` = true; mark the "
        "MoE layers or clear the expert fields");
  }
}

}  // namespace

std::vector<std::string> ModelConfig::Validate() const {
  Problems p(name);
  CheckShape(*this, p);
  CheckRope(*this, p);
  CheckScalars(*this, p);
  CheckLayersAndFeedForward(*this, p);
  return p.Take();
}

}  // namespace samebits::model
