// Writing the Hugging Face layout: config.json and model.safetensors (or
// shards with their index), under the names and keys of the transformers
// class a configuration is written as (safetensors.h, WriteSafetensors).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "engine/formats/architectures.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gemma_norms.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/hf_names.h"
#include "engine/formats/hf_rope.h"
#include "engine/formats/safetensors.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"

namespace samebits::formats {
namespace {

using nlohmann::json;

const char* DTypeTag(model::DType d) {
  switch (d) {
    case model::DType::kF32:
      return "F32";
    case model::DType::kF16:
      return "F16";
    case model::DType::kBF16:
      return "BF16";
  }
  return "F32";
}

// Returns the transformers class a configuration is written as: issue 25's
// dense architectures as their own class; experts with q/k norms (or of
// Qwen3-MoE's GGUF architecture) as Qwen3-MoE, other experts as Mixtral,
// the rest as Llama.
const HfArchitecture& HfArchitectureToWrite(const model::ModelConfig& c) {
  if (c.n_experts <= 0) {
    for (const HfArchitecture& a : kHfArchitectures) {
      if (a.states_every_switch && c.arch == a.gguf_arch) return a;
    }
    return HfArchitectureOf(HfFamily::kLlama);
  }
  const bool qwen3moe = c.qk_norm || c.arch == HfArchitectureOf(HfFamily::kQwen3Moe).gguf_arch;
  return HfArchitectureOf(qwen3moe ? HfFamily::kQwen3Moe : HfFamily::kMixtral);
}

void WriteFile(const std::string& path, const std::string& header,
               const std::vector<const model::TensorView*>& views) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw CheckpointError(path + ": cannot create");
  uint64_t n = header.size();
  unsigned char le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<unsigned char>(n >> (8 * i));
  out.write(reinterpret_cast<const char*>(le), 8);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  std::vector<std::byte> scratch;
  for (const model::TensorView* v : views) {
    const std::span<const std::byte> le = model::LittleEndianBytes(*v, scratch);
    out.write(reinterpret_cast<const char*>(le.data()), static_cast<std::streamsize>(le.size()));
  }
  if (!out) throw CheckpointError(path + ": write failed");
}

// The steps of WriteSafetensors, in order.

// One HF tensor: a whole tensor, one expert of a 3-D expert tensor, or
// (Phi-3) several tensors of one dtype fused by rows.
struct HfPart {
  std::string name;
  std::vector<model::TensorView> views;
  std::vector<int64_t> shape;
  size_t bytes = 0;
};

HfPart MakePart(std::string name, std::vector<model::TensorView> views) {
  HfPart p{std::move(name), std::move(views), {}, 0};
  p.shape = p.views[0].shape;
  for (size_t i = 0; i < p.views.size(); ++i) {
    if (i > 0) p.shape[0] += p.views[i].shape[0];
    if (p.views[i].dtype != p.views[0].dtype) {
      throw CheckpointError("cannot write '" + p.name +
                            "': the tensors it fuses are stored in different dtypes");
    }
    p.bytes += p.views[i].bytes();
  }
  return p;
}

// Returns the engine name of the fused tensor that `name` (blk.N.SUFFIX)
// opens or closes in `family` (Phi-3: q..v into attn_qkv, gate..up into
// ffn_up), and whether it closes it; "" for a tensor written on its own.
std::string FusedInto(const std::string& name, HfFamily family, bool* closes) {
  if (family != HfFamily::kPhi3) return {};
  const size_t dot = name.find('.', 4);
  if (name.rfind("blk.", 0) != 0 || dot == std::string::npos) return {};
  const std::string blk = name.substr(0, dot + 1), rest = name.substr(dot + 1);
  *closes = rest == "attn_v.weight" || rest == "ffn_up.weight";
  if (rest == "attn_q.weight" || rest == "attn_k.weight" || rest == "attn_v.weight")
    return blk + "attn_qkv.weight";
  if (rest == "ffn_gate.weight" || rest == "ffn_up.weight") return blk + "ffn_up.weight";
  return {};
}

// Splits every present tensor into HF tensors (experts one by one, Phi-3's
// projections fused).
std::vector<HfPart> SplitIntoHfTensors(const model::ModelWeights& weights, HfFamily family) {
  std::vector<HfPart> parts;
  std::vector<model::TensorView> pending;  // the parts of a fused tensor so far
  model::ForEachPresentTensor(weights, [&](const std::string& name, const model::TensorView& v) {
    if (name == "rope_freqs.weight") return;  // stated by rope_scaling
    bool closes = false;
    if (const std::string fused = FusedInto(name, family, &closes); !fused.empty()) {
      pending.push_back(v);
      if (closes) {
        parts.push_back(MakePart(HfNameFromGguf(fused, family, -1), std::move(pending)));
        pending.clear();
      }
      return;
    }
    if (v.shape.size() == 3) {
      const std::vector<int64_t> one(v.shape.begin() + 1, v.shape.end());
      const size_t stride = v.bytes() / static_cast<size_t>(v.shape[0]);
      for (int64_t e = 0; e < v.shape[0]; ++e) {
        parts.push_back(MakePart(HfNameFromGguf(name, family, static_cast<int>(e)),
                                 {model::TensorView{v.dtype, one, v.data + e * stride}}));
      }
    } else {
      parts.push_back(MakePart(HfNameFromGguf(name, family, -1), {v}));
    }
  });
  return parts;
}

// Writes the parts into `shards` files of about equal tensor counts, and
// the index that maps each tensor to its file when there are several (a
// stale index is removed when there is one).
void WriteShards(const std::vector<HfPart>& parts, const std::string& dir, int shards) {
  namespace fs = std::filesystem;
  json weight_map = json::object();
  for (int s = 0; s < shards; ++s) {
    const size_t from = parts.size() * s / shards, to = parts.size() * (s + 1) / shards;
    const std::string file = shards == 1 ? "model.safetensors"
                                         : "model-" + std::to_string(s + 1) + "-of-" +
                                               std::to_string(shards) + ".safetensors";
    json header = json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t offset = 0;
    std::vector<const model::TensorView*> views;
    for (size_t i = from; i < to; ++i) {
      const HfPart& p = parts[i];
      header[p.name] = {{"dtype", DTypeTag(p.views[0].dtype)},
                        {"shape", p.shape},
                        {"data_offsets", {offset, offset + p.bytes}}};
      offset += p.bytes;
      for (const model::TensorView& v : p.views) views.push_back(&v);
      weight_map[p.name] = file;
    }
    std::string text = header.dump();
    // Pad with spaces so the data section starts 8-byte aligned.
    while (text.size() % 8 != 0) text.push_back(' ');
    WriteFile((fs::path(dir) / file).string(), text, views);
  }
  if (shards > 1) {
    const json index = {{"metadata", json::object()}, {"weight_map", weight_map}};
    std::ofstream out(fs::path(dir) / "model.safetensors.index.json", std::ios::trunc);
    out << index.dump(1) << "\n";
    if (!out) throw CheckpointError(dir + ": cannot write model.safetensors.index.json");
  } else {
    std::error_code ec;
    fs::remove(fs::path(dir) / "model.safetensors.index.json", ec);
  }
}

// Returns N when layer i slides exactly when (i + 1) % N != 0 (transformers'
// `sliding_window_pattern`), `preferred` when it fits; 0 when no N fits.
int SlidingPatternOf(const std::vector<model::LayerConfig>& layers, int preferred) {
  const auto fits = [&](int n) {
    for (size_t i = 0; i < layers.size(); ++i) {
      if ((layers[i].sliding_window > 0) != ((static_cast<int>(i) + 1) % n != 0)) return false;
    }
    return true;
  };
  if (preferred > 0 && fits(preferred)) return preferred;
  for (int n = 1; n <= static_cast<int>(layers.size()) + 1; ++n) {
    if (fits(n)) return n;
  }
  return 0;
}

// Returns `v` as JSON, or null when it is 0 (transformers' "none").
json NumberOrNull(float v) {
  return v != 0.0f ? json(v) : json(nullptr);
}

// Sets the keys of the classes that state every switch (issue 25's), as
// their transformers configuration classes name them.
void PutClassKeys(const model::ModelConfig& c, const HfArchitecture& arch, json& j) {
  const GgufArchitecture& g = GgufArchitectureOf(arch);
  j["attention_bias"] = false;
  if (g.norm == model::NormKind::kLayerNorm) {
    j.erase("rms_norm_eps");
    j["layer_norm_eps"] = c.norm_eps;
  }
  if (g.gemma_block) {
    j["hidden_activation"] = "gelu_pytorch_tanh";
    j["query_pre_attn_scalar"] = c.head_dim;  // scores scaled by head_dim^-0.5, as the engine
    j["attn_logit_softcapping"] = NumberOrNull(c.attn_softcap);
    j["final_logit_softcapping"] = NumberOrNull(c.final_softcap);
  } else {
    j["hidden_act"] = "silu";
  }
  if (g.local_rope_base) j["rope_local_base_freq"] = c.rope_base_local;
  if (g.parallel_block) j["logit_scale"] = c.logit_scale;
  if (g.sliding_window_pattern == 0 && !arch.window_on_every_layer) return;
  const int window = SharedSlidingWindow(c);
  j["sliding_window"] = window > 0 ? json(window) : json(nullptr);
  if (window == 0 || arch.window_on_every_layer) return;
  // `layer_types` for transformers since 4.53, the pattern for older ones
  // (written only when the layout follows one).
  json types = json::array();
  for (const auto& l : c.layers)
    types.push_back(l.sliding_window > 0 ? "sliding_attention" : "full_attention");
  j["layer_types"] = types;
  if (const int n = SlidingPatternOf(c.layers, g.sliding_window_pattern); n > 0)
    j["sliding_window_pattern"] = n;
}

// Sets transformers' keys of the class.
void PutHfKeys(const model::ModelWeights& weights, const HfArchitecture& arch, json& j) {
  const model::ModelConfig& c = weights.config;
  const HfFamily family = arch.family;
  j["architectures"] = {arch.class_name};
  j["model_type"] = arch.model_type;
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.d_model;
  j["num_hidden_layers"] = c.n_layers();
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["intermediate_size"] = family == HfFamily::kMixtral ? c.expert_ffn_dim : c.ffn_dim;
  j["rms_norm_eps"] = c.norm_eps;
  j["rope_theta"] = c.rope_base;
  j["max_position_embeddings"] = c.max_seq_len;
  j["tie_word_embeddings"] = c.tied_output;
  j["torch_dtype"] = weights.token_embedding.present()
                         ? (weights.token_embedding.dtype == model::DType::kBF16  ? "bfloat16"
                            : weights.token_embedding.dtype == model::DType::kF16 ? "float16"
                                                                                  : "float32")
                         : "float32";
  if (family == HfFamily::kMixtral) {
    j["num_local_experts"] = c.n_experts;
    j["num_experts_per_tok"] = c.top_k;
  } else if (family == HfFamily::kQwen3Moe) {
    j["num_experts"] = c.n_experts;
    j["num_experts_per_tok"] = c.top_k;
    j["moe_intermediate_size"] = c.expert_ffn_dim;
    j["norm_topk_prob"] = c.renormalize_top_k;
  }
  if (arch.states_every_switch) PutClassKeys(c, arch, j);
}

// Sets what transformers has no key for, which only this engine reads back.
void PutSamebitsKeys(const model::ModelConfig& c, bool qk_rows_unpermuted, json& j) {
  j["samebits_arch"] = c.arch;
  j["samebits_name"] = c.name;
  // The rotation the stored rows take: unpermuted rows rotate halves, and
  // samebits_qk_layout tells our reader to go back to adjacent pairs.
  const bool neox = c.rope_style == model::RopeStyle::kNeox || qk_rows_unpermuted;
  j["samebits_rope_style"] = neox ? "neox" : "interleaved";
  if (qk_rows_unpermuted) j["samebits_qk_layout"] = "unpermuted";
  j["samebits_rope_dim"] = c.rope_dim;
  j["samebits_norm"] = c.norm == model::NormKind::kLayerNorm ? "layer" : "rms";
  if (c.norm == model::NormKind::kLayerNorm) j["layer_norm_eps"] = c.norm_eps;
  j["samebits_qk_norm"] = c.qk_norm;
  j["samebits_parallel_block"] = c.parallel_block;
  j["samebits_logit_scale"] = c.logit_scale;
  j["samebits_ffn_dim"] = c.ffn_dim;
  j["samebits_renormalize_top_k"] = c.renormalize_top_k;
  j["samebits_shared_expert_ffn_dim"] = c.shared_expert_ffn_dim;
  json layers = json::array();
  for (const auto& l : c.layers)
    layers.push_back(
        {{"sliding_window", l.sliding_window}, {"use_rope", l.use_rope}, {"moe", l.moe}});
  j["samebits_layers"] = layers;
}

// Returns whether the q/k rows are written unpermuted: a model that rotates
// adjacent pairs (llama.cpp's permuted rows) written as a class whose
// transformers code rotates halves and states no layout of its own.
bool WritesUnpermutedQk(const model::ModelConfig& c, const HfArchitecture& arch) {
  return !arch.states_every_switch && arch.rope_style == model::RopeStyle::kNeox &&
         c.rope_style == model::RopeStyle::kInterleaved;
}

// Returns `w` with the q/k weights (and biases and norms) in transformers'
// row order, the rows copied into `buffers`: the inverse of llama.cpp's
// LlamaModel.permute, so that rotate_half on them computes what adjacent
// pairs compute on `w`.
model::ModelWeights UnpermutedQkRows(const model::ModelWeights& w,
                                     std::vector<std::vector<std::byte>>& buffers) {
  model::ModelWeights out = w;
  const model::ModelConfig& c = w.config;
  const auto unpermute = [&](model::TensorView& v, int64_t heads) {
    if (!v.present()) return;
    std::vector<std::byte> rows(v.bytes());
    PermuteHeadRows({v.data, v.bytes()}, rows, heads, c.head_dim, c.rotary_dim(),
                    v.bytes() / static_cast<size_t>(v.shape[0]), QkRows::kToHf);
    buffers.push_back(std::move(rows));
    v.data = buffers.back().data();
  };
  for (model::LayerWeights& l : out.layers) {
    unpermute(l.wq, c.n_heads);
    unpermute(l.wk, c.n_kv_heads);
    unpermute(l.q_bias, c.n_heads);
    unpermute(l.k_bias, c.n_kv_heads);
    unpermute(l.q_norm, 1);
    unpermute(l.k_norm, 1);
  }
  return out;
}

// Returns config.json's `rope_scaling` for `w`'s rope_freqs: the llama3
// parameters that give back every divisor bit for bit. Throws
// CheckpointError naming `dir` when none do.
json RopeScalingOf(const model::ModelWeights& w, const std::string& dir) {
  const model::ModelConfig& c = w.config;
  std::vector<float> divisors(static_cast<size_t>(w.rope_freqs.elements()));
  w.rope_freqs.ReadF32(0, w.rope_freqs.elements(), divisors.data());
  const std::optional<Llama3RopeScaling> s =
      FitLlama3RopeScaling(divisors, c.rope_base, c.rotary_dim(), c.max_seq_len);
  if (!s) {
    throw CheckpointError(dir + ": " + c.name +
                          "'s rope_freqs are not Llama 3.1's: no llama3 rope_scaling "
                          "(factor, low/high frequency factors, original context) gives back its "
                          "divisors bit for bit; nothing was written");
  }
  return {{"rope_type", "llama3"},
          {"factor", s->factor},
          {"low_freq_factor", s->low_freq_factor},
          {"high_freq_factor", s->high_freq_factor},
          {"original_max_position_embeddings", s->original_max_position_embeddings}};
}

}  // namespace

std::string SafetensorsUnwritableSwitches(const model::ModelConfig& c) {
  std::string names;
  const auto add = [&](bool on, const std::string& name) {
    if (on) names += (names.empty() ? "" : ", ") + name;
  };
  const HfArchitecture& arch = HfArchitectureToWrite(c);
  if (!arch.states_every_switch) {
    add(c.post_norms, "post_norms");
    add(c.attn_softcap != 0.0f, "attn_softcap");
    add(c.final_softcap != 0.0f, "final_softcap");
    add(c.embedding_scale != 1.0f, "embedding_scale");
    add(c.activation != model::Activation::kSilu, "GELU activation");
    add(c.rope_base_local != 0.0f, "rope_base_local");
  } else {
    // The Gemma operations and the windows as the GGUF architecture implies
    // them (the class implies the same), then what only the class fixes.
    names = GgufUnwritableSwitches(c);
    const GgufArchitecture& g = GgufArchitectureOf(arch);
    const auto any_layer = [&](auto pred) {
      return std::any_of(c.layers.begin(), c.layers.end(), pred);
    };
    add(c.rope_style != arch.rope_style,
        "another rotary layout than " + std::string(arch.class_name) + "'s");
    add(c.rope_dim != 0 && c.rope_dim != c.head_dim, "partial rotary dimensions");
    add(c.norm != g.norm, "another norm than " + std::string(arch.class_name) + "'s");
    add(c.qk_norm != g.qk_norm, c.qk_norm ? "q/k norms" : "no q/k norms");
    add(c.qkv_bias, "q/k/v biases");
    add(c.parallel_block != g.parallel_block,
        c.parallel_block ? "parallel_block" : "a sequential block");
    add(!g.parallel_block && c.logit_scale != 1.0f, "logit_scale");
    add(g.parallel_block && c.head_dim * c.n_heads != c.d_model,
        "head_dim other than hidden_size / num_attention_heads");
    const int window = SharedSlidingWindow(c);
    if (arch.window_on_every_layer) {
      add(any_layer([&](const auto& l) { return l.sliding_window != window; }),
          "sliding windows on only some layers");
    } else if (g.sliding_window_pattern == 0) {
      add(window != 0, "sliding windows");
    }
    add(!g.global_layers_without_rope && any_layer([](const auto& l) { return !l.use_rope; }),
        "layers without RoPE");
  }
  // Llama 3.1's factors go as rope_scaling, which WriteSafetensors fits.
  add(c.rope_freq_factors && arch.states_every_switch, "rope_freq_factors");
  return names;
}

void WriteSafetensors(const model::ModelWeights& quantized, const std::string& dir, int shards) {
  namespace fs = std::filesystem;
  if (const std::string u = SafetensorsUnwritableSwitches(quantized.config); !u.empty()) {
    throw CheckpointError(dir + ": " + quantized.config.name + " uses " + u +
                          ", which safetensors cannot state; nothing was written");
  }
  // Safetensors has no block types: quantized tensors go as their F32 values.
  model::ModelWeights weights = model::DequantizedWeights(quantized);
  const HfArchitecture& arch = HfArchitectureToWrite(weights.config);
  json j;
  if (weights.config.rope_freq_factors) j["rope_scaling"] = RopeScalingOf(weights, dir);
  std::vector<std::vector<float>> shifted;  // the views of Gemma's norm weights point here
  if (arch.norm_weight_minus_one) weights = NormWeightsMinusOne(weights, shifted);
  const bool unpermuted = WritesUnpermutedQk(weights.config, arch);
  std::vector<std::vector<std::byte>> rows;  // the views of unpermuted q/k point here
  if (unpermuted) weights = UnpermutedQkRows(weights, rows);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::vector<HfPart> parts = SplitIntoHfTensors(weights, arch.family);
  WriteShards(parts, dir, std::max(1, std::min<int>(shards, static_cast<int>(parts.size()))));
  PutHfKeys(weights, arch, j);
  PutSamebitsKeys(weights.config, unpermuted, j);
  std::ofstream out(fs::path(dir) / "config.json", std::ios::trunc);
  out << j.dump(2) << "\n";
  if (!out) throw CheckpointError(dir + ": cannot write config.json");
}

}  // namespace samebits::formats