// The one list of tensors. Names follow GGUF (llama.cpp) conventions; shapes
// follow the engine's row-major `[out][in]` convention, which is GGUF's
// `ne` list reversed. A loader maps file tensors onto these specs by name.
#include "engine/model/tensor_spec.h"

#include <xxhash.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace samebits::model {
namespace {

// Returns a slot accessor for a model-level view.
std::function<TensorView&(ModelWeights&)> ModelSlot(TensorView ModelWeights::*member) {
  return [member](ModelWeights& w) -> TensorView& { return w.*member; };
}

// Returns a slot accessor for a view of layer `layer`. The accessor sizes
// `w.layers` on first use so that a loader may fill slots in any order.
std::function<TensorView&(ModelWeights&)> LayerSlot(int layer, TensorView LayerWeights::*member) {
  return [layer, member](ModelWeights& w) -> TensorView& {
    if (w.layers.size() <= static_cast<size_t>(layer)) w.layers.resize(layer + 1);
    return w.layers[layer].*member;
  };
}

}  // namespace

void ForEachTensor(const ModelConfig& c, const std::function<void(const TensorSpec&)>& visit) {
  const int64_t d = c.d_model;
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim;
  const int64_t kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  const bool layer_norm = c.norm == NormKind::kLayerNorm;

  visit({"token_embd.weight",
         {c.vocab_size, d},
         TensorKind::kEmbedding,
         -1,
         true,
         ModelSlot(&ModelWeights::token_embedding)});
  if (c.rope_freq_factors) {
    visit({"rope_freqs.weight",
           {c.rotary_dim() / 2},
           TensorKind::kNorm,
           -1,
           true,
           ModelSlot(&ModelWeights::rope_freqs)});
  }

  for (int i = 0; i < c.n_layers(); ++i) {
    const LayerConfig& lc = c.layers[i];
    const std::string b = "blk." + std::to_string(i) + ".";
    auto add = [&](const char* suffix, std::vector<int64_t> shape, TensorKind kind, bool required,
                   TensorView LayerWeights::*member) {
      visit({b + suffix, std::move(shape), kind, i, required, LayerSlot(i, member)});
    };

    // Attention. LayerNorm biases are optional: Cohere-style LayerNorm has
    // none, and an absent bias means no addition.
    add("attn_norm.weight", {d}, TensorKind::kNorm, true, &LayerWeights::attn_norm);
    if (layer_norm)
      add("attn_norm.bias", {d}, TensorKind::kNorm, false, &LayerWeights::attn_norm_bias);
    add("attn_q.weight", {q_dim, d}, TensorKind::kMatrix, true, &LayerWeights::wq);
    add("attn_k.weight", {kv_dim, d}, TensorKind::kMatrix, true, &LayerWeights::wk);
    add("attn_v.weight", {kv_dim, d}, TensorKind::kMatrix, true, &LayerWeights::wv);
    add("attn_output.weight", {d, q_dim}, TensorKind::kMatrix, true, &LayerWeights::wo);
    if (c.qkv_bias) {
      add("attn_q.bias", {q_dim}, TensorKind::kNorm, true, &LayerWeights::q_bias);
      add("attn_k.bias", {kv_dim}, TensorKind::kNorm, true, &LayerWeights::k_bias);
      add("attn_v.bias", {kv_dim}, TensorKind::kNorm, true, &LayerWeights::v_bias);
    }
    if (c.qk_norm) {
      add("attn_q_norm.weight", {c.head_dim}, TensorKind::kNorm, true, &LayerWeights::q_norm);
      add("attn_k_norm.weight", {c.head_dim}, TensorKind::kNorm, true, &LayerWeights::k_norm);
    }

    if (c.post_norms) {
      add("post_attention_norm.weight", {d}, TensorKind::kNorm, true,
          &LayerWeights::post_attn_norm);
    }

    // FFN. A parallel block normalises once (attn_norm) for both branches.
    if (!c.parallel_block) {
      add("ffn_norm.weight", {d}, TensorKind::kNorm, true, &LayerWeights::ffn_norm);
      if (layer_norm)
        add("ffn_norm.bias", {d}, TensorKind::kNorm, false, &LayerWeights::ffn_norm_bias);
    }
    if (!lc.moe) {
      add("ffn_gate.weight", {c.ffn_dim, d}, TensorKind::kMatrix, true, &LayerWeights::ffn_gate);
      add("ffn_up.weight", {c.ffn_dim, d}, TensorKind::kMatrix, true, &LayerWeights::ffn_up);
      add("ffn_down.weight", {d, c.ffn_dim}, TensorKind::kMatrix, true, &LayerWeights::ffn_down);
    } else {
      const int64_t e = c.n_experts, f = c.expert_ffn_dim;
      add("ffn_gate_inp.weight", {e, d}, TensorKind::kRouter, true, &LayerWeights::router);
      add("ffn_gate_exps.weight", {e, f, d}, TensorKind::kMatrix, true, &LayerWeights::expert_gate);
      add("ffn_up_exps.weight", {e, f, d}, TensorKind::kMatrix, true, &LayerWeights::expert_up);
      add("ffn_down_exps.weight", {e, d, f}, TensorKind::kMatrix, true, &LayerWeights::expert_down);
      if (c.shared_expert_ffn_dim > 0) {
        const int64_t s = c.shared_expert_ffn_dim;
        add("ffn_gate_shexp.weight", {s, d}, TensorKind::kMatrix, true, &LayerWeights::shared_gate);
        add("ffn_up_shexp.weight", {s, d}, TensorKind::kMatrix, true, &LayerWeights::shared_up);
        add("ffn_down_shexp.weight", {d, s}, TensorKind::kMatrix, true, &LayerWeights::shared_down);
      }
    }
    if (c.post_norms) {
      add("post_ffw_norm.weight", {d}, TensorKind::kNorm, true, &LayerWeights::post_ffn_norm);
    }
  }

  visit({"output_norm.weight",
         {d},
         TensorKind::kNorm,
         -1,
         true,
         ModelSlot(&ModelWeights::output_norm)});
  if (layer_norm) {
    visit({"output_norm.bias",
           {d},
           TensorKind::kNorm,
           -1,
           false,
           ModelSlot(&ModelWeights::output_norm_bias)});
  }
  if (!c.tied_output) {
    visit({"output.weight",
           {c.vocab_size, d},
           TensorKind::kMatrix,
           -1,
           true,
           ModelSlot(&ModelWeights::output)});
  }
}

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

void ForEachPresentTensor(ModelWeights& w,
                          const std::function<void(const std::string&, TensorView&)>& visit) {
  ForEachTensor(w.config, [&](const TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(w.layers.size())) return;
    TensorView& v = spec.slot(w);
    if (v.present()) visit(spec.name, v);
  });
}

void ForEachPresentTensor(const ModelWeights& w,
                          const std::function<void(const std::string&, const TensorView&)>& visit) {
  // slot() hands out a mutable view; this walk only reads through it.
  ForEachPresentTensor(const_cast<ModelWeights&>(w),
                       [&](const std::string& name, TensorView& v) { visit(name, v); });
}

std::vector<std::string> CheckWeights(const ModelWeights& weights) {
  std::vector<std::string> problems;
  const std::string model = weights.config.name.empty() ? "the model" : weights.config.name;
  if (weights.layers.size() != weights.config.layers.size()) {
    problems.push_back(model + ": the weights have " + std::to_string(weights.layers.size()) +
                       " layers but the config has " +
                       std::to_string(weights.config.layers.size()));
    return problems;
  }
  ModelWeights& w = const_cast<ModelWeights&>(weights);
  ForEachTensor(weights.config, [&](const TensorSpec& spec) {
    const TensorView& view = spec.slot(w);
    if (!view.present()) {
      if (spec.required)
        problems.push_back(model + ": required tensor '" + spec.name + "' is missing");
      return;
    }
    if (view.shape != spec.shape) {
      problems.push_back(model + ": tensor '" + spec.name + "' has shape " + ShapeText(view.shape) +
                         " but the config implies " + ShapeText(spec.shape));
    }
  });
  return problems;
}

std::string HashWeights(const ModelWeights& weights) {
  // Owned, so that a tensor LittleEndianBytes refuses does not leak it.
  const std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> owned(XXH3_createState(),
                                                                       XXH3_freeState);
  XXH3_state_t* state = owned.get();
  if (state == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state);
  // The slots hand out mutable references; hashing only reads through them.
  ModelWeights& w = const_cast<ModelWeights&>(weights);
  auto put_u64 = [&](uint64_t v) {
    unsigned char le[8];
    for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(v >> (8 * i));
    XXH3_64bits_update(state, le, sizeof le);
  };
  std::vector<std::byte> scratch;
  ForEachTensor(weights.config, [&](const TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(weights.layers.size())) return;
    const TensorView& view = spec.slot(w);
    if (!view.present()) return;
    // The name with its terminating NUL, so "ab"+"c" differs from "a"+"bc".
    XXH3_64bits_update(state, spec.name.c_str(), spec.name.size() + 1);
    // A quantized tensor is hashed as stored (its blocks), not as its f32
    // copy: its block type is tagged apart from the plain dtypes.
    put_u64(view.quantized ? 0x100 + static_cast<uint64_t>(view.quant_type)
                           : static_cast<uint64_t>(view.dtype));
    put_u64(view.shape.size());
    for (int64_t dim : view.shape) put_u64(static_cast<uint64_t>(dim));
    if (view.quantized) {
      XXH3_64bits_update(state, view.quant_blocks, view.quant_bytes());
    } else {
      // The elements as the files store them (little-endian), so that every
      // host reports the same digest for the same weights.
      const std::span<const std::byte> le = LittleEndianBytes(view, scratch);
      XXH3_64bits_update(state, le.data(), le.size());
    }
  });
  const uint64_t h = XXH3_64bits_digest(state);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

int64_t CountParameters(const ModelWeights& weights) {
  ModelWeights& w = const_cast<ModelWeights&>(weights);
  int64_t n = 0;
  ForEachTensor(weights.config, [&](const TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(weights.layers.size())) return;
    n += spec.slot(w).elements();
  });
  return n;
}

}  // namespace samebits::model
