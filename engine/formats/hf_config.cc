// config.json read into the engine's configuration (hf_config.h).
#include "engine/formats/hf_config.h"

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "engine/formats/architectures.h"
#include "engine/formats/checkpoint.h"

namespace samebits::formats {
namespace {

using nlohmann::json;

// Typed access to config.json with errors naming the file and key.
class Config {
 public:
  Config(const json& j, std::string label) : j_(j), label_(std::move(label)) {}
  [[noreturn]] void Fail(const std::string& what) const {
    throw CheckpointError(label_ + ": " + what);
  }
  bool Has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }
  int Int(const char* key, int lo = 1) const {
    if (!Has(key)) Fail(std::string("config.json lacks the required key '") + key + "'");
    return IntOf(j_[key], key, lo);
  }
  int IntOf(const json& v, const std::string& key, int lo) const {
    if (!v.is_number_integer())
      Fail("config.json key '" + key + "' is " + v.type_name() + ", expected an integer");
    const bool ok =
        v.is_number_unsigned()
            ? v.get<uint64_t>() <= uint64_t(std::numeric_limits<int32_t>::max())
            : (v.get<int64_t>() >= lo && v.get<int64_t>() <= std::numeric_limits<int32_t>::max());
    if (!ok || v.get<int64_t>() < lo)
      Fail("config.json key '" + key + "' is " + v.dump() + ", out of range");
    return static_cast<int>(v.get<int64_t>());
  }
  int IntOr(const char* key, int fallback, int lo = 0) const {
    return Has(key) ? Int(key, lo) : fallback;
  }
  float FloatOr(const char* key, float fallback) const {
    if (!Has(key)) return fallback;
    if (!j_[key].is_number())
      Fail(std::string("config.json key '") + key + "' is " + j_[key].type_name() +
           ", expected a number");
    const double v = j_[key].get<double>();
    // Beyond float's range the conversion would be undefined: refuse it.
    if (!(std::fabs(v) <= std::numeric_limits<float>::max())) {
      Fail(std::string("config.json key '") + key + "' is not a finite float32 value");
    }
    return static_cast<float>(v);
  }
  bool BoolOr(const char* key, bool fallback) const {
    if (!Has(key)) return fallback;
    if (!j_[key].is_boolean())
      Fail(std::string("config.json key '") + key + "' is " + j_[key].type_name() +
           ", expected a boolean");
    return j_[key].get<bool>();
  }
  std::string StringOr(const char* key, const std::string& fallback) const {
    if (!Has(key)) return fallback;
    if (!j_[key].is_string())
      Fail(std::string("config.json key '") + key + "' is " + j_[key].type_name() +
           ", expected a string");
    return j_[key].get<std::string>();
  }
  const json& raw() const { return j_; }

 private:
  const json& j_;
  std::string label_;
};

// The steps of ConfigFromJson, in the order it takes them.

// Returns the table entry of `architectures[0]`; an unknown class is refused
// naming the ones the table knows. Refuses the features no class supports.
const HfArchitecture& ReadArchitecture(const Config& c, model::ModelConfig& m) {
  const json& j = c.raw();
  if (!c.Has("architectures") || !j["architectures"].is_array() || j["architectures"].empty() ||
      !j["architectures"][0].is_string()) {
    c.Fail("config.json lacks an 'architectures' list naming the model class");
  }
  const std::string cls = j["architectures"][0].get<std::string>();
  const HfArchitecture* arch = FindHfArchitecture(cls);
  if (arch == nullptr) {
    c.Fail("architecture '" + cls + "' is not supported (" + KnownHfArchitectures() + ")");
  }
  if (c.BoolOr("attention_bias", false) || c.BoolOr("mlp_bias", false)) {
    c.Fail("config.json asks for attention or MLP biases, which the engine does not implement");
  }
  m.arch = c.StringOr("samebits_arch", arch->gguf_arch);
  return *arch;
}

// Reads the widths, the layer count (bounded by the tensor table) and the
// attention heads. Returns the layer count.
int ReadShape(const Config& c, const TensorTable& table, model::ModelConfig& m) {
  m.vocab_size = c.Int("vocab_size");
  m.d_model = c.Int("hidden_size");
  const int n_layers = c.Int("num_hidden_layers");
  if (static_cast<size_t>(n_layers) > table.size()) {
    c.Fail("num_hidden_layers is " + std::to_string(n_layers) + " but there are only " +
           std::to_string(table.size()) + " tensors");
  }
  m.n_heads = c.Int("num_attention_heads");
  m.n_kv_heads = c.IntOr("num_key_value_heads", m.n_heads, 1);
  if (c.Has("head_dim")) {
    m.head_dim = c.Int("head_dim");
  } else {
    if (m.d_model % m.n_heads != 0)
      c.Fail("hidden_size is not a multiple of num_attention_heads and head_dim is absent");
    m.head_dim = m.d_model / m.n_heads;
  }
  return n_layers;
}

// Refuses an activation key other than the one the class computes with:
// Gemma's `hidden_activation` (GELU, tanh form), the others' `hidden_act` (SiLU).
void CheckActivation(const Config& c, const GgufArchitecture& g) {
  const char* key = g.gemma_block ? "hidden_activation" : "hidden_act";
  const char* expected = g.gemma_block ? "gelu_pytorch_tanh" : "silu";
  const std::string act = c.StringOr(key, expected);
  if (act != expected) {
    c.Fail(std::string("config.json key '") + key + "' is '" + act + "'; the engine computes " +
           expected + " for this class");
  }
}

// Reads the rotary embedding, the norm and the switches of the block: the
// class's (those of its GGUF architecture, architectures.h) from
// transformers' keys.
void ReadRopeNormAndSwitches(const Config& c, const HfArchitecture& arch, model::ModelConfig& m) {
  const GgufArchitecture& g = GgufArchitectureOf(arch);
  m.rope_dim = c.IntOr("samebits_rope_dim", 0);
  m.rope_base = c.FloatOr("rope_theta", arch.default_rope_theta);
  if (g.local_rope_base) m.rope_base_local = c.FloatOr("rope_local_base_freq", 10000.0f);
  m.rope_style = arch.rope_style;
  const std::string style = c.StringOr(
      "samebits_rope_style", m.rope_style == model::RopeStyle::kNeox ? "neox" : "interleaved");
  if (style == "interleaved") {
    m.rope_style = model::RopeStyle::kInterleaved;
  } else if (style == "neox") {
    m.rope_style = model::RopeStyle::kNeox;
  } else {
    c.Fail("samebits_rope_style is '" + style + "' (expected 'interleaved' or 'neox')");
  }
  const std::string norm =
      c.StringOr("samebits_norm", g.norm == model::NormKind::kLayerNorm ? "layer" : "rms");
  if (norm == "layer") {
    m.norm = model::NormKind::kLayerNorm;
    m.norm_eps = c.FloatOr("layer_norm_eps", 1e-5f);
  } else if (norm == "rms") {
    m.norm_eps = c.FloatOr("rms_norm_eps", 1e-6f);
  } else {
    c.Fail("samebits_norm is '" + norm + "' (expected 'rms' or 'layer')");
  }
  CheckActivation(c, g);
  if (g.gemma_block) {
    m.post_norms = true;
    m.activation = model::Activation::kGeluTanh;
    m.embedding_scale = std::sqrt(static_cast<float>(m.d_model));
    m.attn_softcap = c.FloatOr("attn_logit_softcapping", 0.0f);
    m.final_softcap = c.FloatOr("final_logit_softcapping", 0.0f);
    // transformers scales the scores by query_pre_attn_scalar^-0.5; the
    // engine by head_dim^-0.5.
    if (c.Has("query_pre_attn_scalar") &&
        c.FloatOr("query_pre_attn_scalar", 0.0f) != static_cast<float>(m.head_dim)) {
      c.Fail("config.json key 'query_pre_attn_scalar' is " +
             c.raw()["query_pre_attn_scalar"].dump() +
             "; the engine scales attention scores by head_dim (" + std::to_string(m.head_dim) +
             ") only");
    }
  }
  m.qk_norm = c.BoolOr("samebits_qk_norm", g.qk_norm);
  m.parallel_block = c.BoolOr("samebits_parallel_block", g.parallel_block);
  // Cohere's `logit_scale` (transformers' default 0.0625).
  m.logit_scale = c.FloatOr("samebits_logit_scale",
                            g.parallel_block ? c.FloatOr("logit_scale", 0.0625f) : 1.0f);
  m.max_seq_len = c.IntOr("max_position_embeddings", 4096, 1);
  m.tied_output = c.BoolOr("tie_word_embeddings", false);
}

// Reads which layers slide, as transformers decides it: `layer_types`
// ("sliding_attention" or "full_attention" per layer) when present, else
// `sliding_window_pattern` N or the class's (layer i slides unless
// (i + 1) % N == 0); Phi-3's window is on every layer. Cohere2's global
// layers go without RoPE. A `sliding_window` of null slides nothing.
void ReadWindows(const Config& c, const HfArchitecture& arch, model::ModelConfig& m) {
  const GgufArchitecture& g = GgufArchitectureOf(arch);
  if (g.sliding_window_pattern == 0 && !arch.window_on_every_layer) return;
  const int window = c.IntOr("sliding_window", 0);
  const int n_layers = m.n_layers();
  std::vector<bool> slides(static_cast<size_t>(n_layers), window > 0);
  if (window > 0 && c.Has("layer_types")) {
    const json& types = c.raw()["layer_types"];
    if (!types.is_array() || types.size() != static_cast<size_t>(n_layers)) {
      c.Fail("config.json key 'layer_types' is not a list of num_hidden_layers entries");
    }
    for (int i = 0; i < n_layers; ++i) {
      const json& t = types[static_cast<size_t>(i)];
      if (t != "sliding_attention" && t != "full_attention") {
        c.Fail("config.json layer_types[" + std::to_string(i) + "] is " + t.dump() +
               " (expected \"sliding_attention\" or \"full_attention\")");
      }
      slides[static_cast<size_t>(i)] = t == "sliding_attention";
    }
  } else if (window > 0 && !arch.window_on_every_layer) {
    const int pattern = c.IntOr("sliding_window_pattern", g.sliding_window_pattern, 1);
    for (int i = 0; i < n_layers; ++i) slides[static_cast<size_t>(i)] = (i + 1) % pattern != 0;
  }
  for (int i = 0; i < n_layers; ++i) {
    m.layers[i].sliding_window = slides[static_cast<size_t>(i)] ? window : 0;
    if (g.global_layers_without_rope) m.layers[i].use_rope = slides[static_cast<size_t>(i)];
  }
}

// Reads the FFN widths and the experts, in the keys of the class's family,
// and which layers are MoE.
void ReadFeedForward(const Config& c, const HfArchitecture& arch, int n_layers,
                     model::ModelConfig& m) {
  m.ffn_dim = c.IntOr("intermediate_size", 0);
  m.layers.resize(n_layers);
  if (arch.family == HfFamily::kMixtral) {
    m.n_experts = c.Int("num_local_experts");
    m.top_k = c.Int("num_experts_per_tok");
    m.expert_ffn_dim = m.ffn_dim;
    m.renormalize_top_k = true;  // softmax over the chosen experts' logits
    for (auto& l : m.layers) l.moe = true;
  } else if (arch.family == HfFamily::kQwen3Moe) {
    m.n_experts = c.IntOr("num_experts", 0);
    if (m.n_experts > 0) {
      m.top_k = c.Int("num_experts_per_tok");
      m.expert_ffn_dim = c.Int("moe_intermediate_size");
      m.renormalize_top_k = c.BoolOr("norm_topk_prob", false);
      const int step = c.IntOr("decoder_sparse_step", 1, 1);
      std::set<int> dense;
      if (c.Has("mlp_only_layers")) {
        const json& listed = c.raw()["mlp_only_layers"];
        if (!listed.is_array()) c.Fail("config.json key 'mlp_only_layers' is not a list");
        for (const json& v : listed) dense.insert(c.IntOf(v, "mlp_only_layers", 0));
      }
      for (int i = 0; i < n_layers; ++i)
        m.layers[i].moe = dense.count(i) == 0 && (i + 1) % step == 0;
    }
  }
}

// Reads what transformers has no key for (our writer's samebits_* keys),
// which overrides what the class implies.
void ReadSamebitsKeys(const Config& c, const std::string& label, int n_layers,
                      model::ModelConfig& m) {
  m.shared_expert_ffn_dim = c.IntOr("samebits_shared_expert_ffn_dim", 0);
  if (c.Has("samebits_renormalize_top_k"))
    m.renormalize_top_k = c.BoolOr("samebits_renormalize_top_k", false);
  if (c.Has("samebits_ffn_dim")) m.ffn_dim = c.Int("samebits_ffn_dim", 0);
  if (c.Has("samebits_layers")) {
    const json& layers = c.raw()["samebits_layers"];
    if (!layers.is_array() || layers.size() != static_cast<size_t>(n_layers)) {
      c.Fail("samebits_layers is not a list of num_hidden_layers entries");
    }
    for (int i = 0; i < n_layers; ++i) {
      const Config l(layers[i], label);
      if (!layers[i].is_object())
        c.Fail("samebits_layers[" + std::to_string(i) + "] is not an object");
      m.layers[i].sliding_window = l.IntOr("sliding_window", 0);
      m.layers[i].use_rope = l.BoolOr("use_rope", true);
      m.layers[i].moe = l.BoolOr("moe", m.layers[i].moe);
    }
  }
}

// Returns rope_scaling's number `key` as a finite double within float's
// range, or fails naming it.
double ScalingNumber(const Config& c, const json& scaling, const char* key) {
  if (!scaling.contains(key)) c.Fail(std::string("config.json rope_scaling lacks '") + key + "'");
  const json& v = scaling[key];
  if (!v.is_number()) {
    c.Fail(std::string("config.json rope_scaling '") + key + "' is " + v.type_name() +
           ", expected a number");
  }
  const double d = v.get<double>();
  if (!(std::fabs(d) <= std::numeric_limits<float>::max()))
    c.Fail(std::string("config.json rope_scaling '") + key + "' is not a finite float32 value");
  return d;
}

// Reads `rope_scaling`: Llama 3.1's (rope_type, or the older `type`,
// "llama3", with all four of its keys, as transformers requires them);
// "default" means none. Other types, and scaling on the classes that state
// every switch (whose rotary embeddings this does not model), are refused.
std::optional<Llama3RopeScaling> ReadRopeScaling(const Config& c, const HfArchitecture& arch) {
  // transformers 5 states RoPE (its theta and its scaling) in
  // `rope_parameters`; read as if absent, a scaled model would load
  // unscaled, so it is refused until it is read.
  if (c.Has("rope_parameters")) {
    c.Fail(
        "config.json sets 'rope_parameters' (transformers 5's RoPE keys), which the engine "
        "does not read; state them as 'rope_theta' and 'rope_scaling'");
  }
  if (!c.Has("rope_scaling")) return std::nullopt;
  const json& scaling = c.raw()["rope_scaling"];
  if (!scaling.is_object()) c.Fail("config.json key 'rope_scaling' is not an object");
  const char* type_key = scaling.contains("rope_type") ? "rope_type" : "type";
  if (!scaling.contains(type_key) || !scaling[type_key].is_string())
    c.Fail("config.json rope_scaling lacks a 'rope_type' string");
  const std::string type = scaling[type_key].get<std::string>();
  if (type == "default") return std::nullopt;
  if (type != "llama3") {
    c.Fail("config.json rope_scaling has rope_type '" + type +
           "', which the engine does not implement (it reads 'llama3')");
  }
  if (arch.states_every_switch) {
    c.Fail(std::string("config.json sets rope_scaling, which the engine reads for the Llama, "
                       "Mixtral and Qwen3-MoE classes only, not ") +
           arch.class_name);
  }
  Llama3RopeScaling s;
  s.factor = ScalingNumber(c, scaling, "factor");
  s.low_freq_factor = ScalingNumber(c, scaling, "low_freq_factor");
  s.high_freq_factor = ScalingNumber(c, scaling, "high_freq_factor");
  const char* original = "original_max_position_embeddings";
  if (!scaling.contains(original))
    c.Fail("config.json rope_scaling lacks '" + std::string(original) + "'");
  s.original_max_position_embeddings =
      c.IntOf(scaling[original], std::string("rope_scaling ") + original, 1);
  if (!(s.factor > 0.0)) c.Fail("config.json rope_scaling 'factor' must be positive");
  if (!(s.low_freq_factor > 0.0))
    c.Fail("config.json rope_scaling 'low_freq_factor' must be positive");
  if (!(s.high_freq_factor > s.low_freq_factor))
    c.Fail("config.json rope_scaling 'high_freq_factor' must exceed 'low_freq_factor'");
  return s;
}

// Reads `samebits_qk_layout`: "unpermuted" says our writer stored the q/k
// rows of an adjacent-pair (llama.cpp) model in transformers' order, for
// rotate_half; the engine permutes them back and rotates adjacent pairs.
bool ReadQkRowsUnpermuted(const Config& c, const HfArchitecture& arch, model::ModelConfig& m) {
  if (!c.Has("samebits_qk_layout")) return false;
  const std::string layout = c.StringOr("samebits_qk_layout", "");
  if (layout != "unpermuted")
    c.Fail("samebits_qk_layout is '" + layout + "' (expected 'unpermuted')");
  if (arch.states_every_switch) {
    c.Fail(std::string("samebits_qk_layout is written for the Llama, Mixtral and Qwen3-MoE "
                       "classes only, not ") +
           arch.class_name);
  }
  if (m.rope_style != model::RopeStyle::kNeox) {
    c.Fail(
        "samebits_qk_layout 'unpermuted' describes rows for rotate_half, but "
        "samebits_rope_style is 'interleaved'");
  }
  m.rope_style = model::RopeStyle::kInterleaved;
  return true;
}

}  // namespace

HfConfig ConfigFromJson(const json& j, const std::string& label, const TensorTable& table) {
  if (!j.is_object()) throw CheckpointError(label + ": config.json is not a JSON object");
  const Config c(j, label);
  HfConfig out;
  model::ModelConfig& m = out.model;
  const HfArchitecture& arch = ReadArchitecture(c, m);
  m.name = c.StringOr("samebits_name", std::filesystem::path(label).filename().string());
  const int n_layers = ReadShape(c, table, m);
  ReadRopeNormAndSwitches(c, arch, m);
  out.qk_rows_unpermuted = ReadQkRowsUnpermuted(c, arch, m);
  out.rope_scaling = ReadRopeScaling(c, arch);
  m.rope_freq_factors = out.rope_scaling.has_value();
  ReadFeedForward(c, arch, n_layers, m);
  ReadWindows(c, arch, m);
  ReadSamebitsKeys(c, label, n_layers, m);
  return out;
}

}  // namespace samebits::formats
