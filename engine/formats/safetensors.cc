#include "engine/formats/safetensors.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include "engine/formats/architectures.h"
#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/hf_names.h"
#include "engine/formats/hf_rope.h"
#include "engine/formats/mapped_file.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"
#include "engine/numerics/byte_order.h"

namespace samebits::formats {
namespace {

using nlohmann::json;

// A header longer than this is refused: real headers are kilobytes.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

// Returns the file's text, or throws CheckpointError naming it.
std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path + ": cannot open");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json ParseJson(std::string_view text, const std::string& label, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw CheckpointError(label + ": " + what + " is not valid JSON: " + e.what());
  }
}

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

// A configuration as config.json states it: the engine's, plus what turns
// the file's tensors into the engine's (rows to permute, divisors to derive).
struct HfConfig {
  model::ModelConfig model;
  bool qk_rows_unpermuted = false;
  std::optional<Llama3RopeScaling> rope_scaling;
};

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

model::DType ParseDTypeName(const std::string& s, const std::string& label,
                            const std::string& tensor) {
  if (s == "F32") return model::DType::kF32;
  if (s == "F16") return model::DType::kF16;
  if (s == "BF16") return model::DType::kBF16;
  throw CheckpointError(label + ": tensor '" + tensor + "' has dtype '" + s +
                        "', which is not supported (F32, F16 and BF16 are)");
}

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

// Returns whether engine tensor `name` is a norm weight that Gemma's
// RMSNorm applies as (1 + w): every `...norm.weight`, as llama.cpp's
// converter decides it (q/k norms included).
bool IsOnePlusNorm(const std::string& name) {
  return name.ends_with("norm.weight");
}

// Calls `visit` with the name and view of every present tensor of `w`.
void ForEachPresent(const model::ModelWeights& w,
                    const std::function<void(const std::string&, model::TensorView&)>& visit) {
  model::ModelWeights& m = const_cast<model::ModelWeights&>(w);  // the caller's to change
  model::ForEachTensor(w.config, [&](const model::TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(m.layers.size())) return;
    model::TensorView& v = spec.slot(m);
    if (v.present()) visit(spec.name, v);
  });
}

// Gemma files hold w - 1 for each norm weight: replaces each by F32 (w + 1),
// computed in F32 as transformers' Gemma RMSNorm computes (1 + w.float()).
void AddOneToNormWeights(model::ModelWeights& w, LoadedStorage& storage) {
  ForEachPresent(w, [&](const std::string& name, model::TensorView& v) {
    if (!IsOnePlusNorm(name)) return;
    std::vector<float> values(static_cast<size_t>(v.elements()));
    v.ReadF32(0, v.elements(), values.data());
    for (float& x : values) x += 1.0f;
    std::vector<std::byte> buffer(values.size() * sizeof(float));
    std::memcpy(buffer.data(), values.data(), buffer.size());
    storage.buffers.push_back(std::move(buffer));
    v = model::TensorView{model::DType::kF32, v.shape, storage.buffers.back().data()};
  });
}

// Puts llama.cpp's row order back into the q/k tensors (and their biases
// and norms) of `table`, each copied into `storage`: the file holds them
// unpermuted (samebits_qk_layout). A tensor of an unexpected shape is left
// for the binder to refuse.
void PermuteQkRowsBack(const model::ModelConfig& c, TensorTable& table, LoadedStorage& storage) {
  const auto permute = [&](const std::string& name, int64_t heads) {
    const auto it = table.find(name);
    if (it == table.end() || it->second.quantized || it->second.shape.empty() ||
        it->second.shape[0] != heads * c.head_dim) {
      return;
    }
    FileTensor& t = it->second;
    size_t bytes = numerics::DTypeSize(t.dtype);
    for (size_t d = 0; d < t.shape.size(); ++d) bytes *= static_cast<size_t>(t.shape[d]);
    const size_t row_bytes = bytes / static_cast<size_t>(t.shape[0]);
    std::vector<std::byte> rows(bytes);
    PermuteHeadRows({t.data, bytes}, rows, heads, c.head_dim, c.rotary_dim(), row_bytes,
                    QkRows::kToGguf);
    storage.buffers.push_back(std::move(rows));
    t.data = storage.buffers.back().data();
  };
  for (int l = 0; l < c.n_layers(); ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    permute(b + "attn_q.weight", c.n_heads);
    permute(b + "attn_k.weight", c.n_kv_heads);
    permute(b + "attn_q.bias", c.n_heads);
    permute(b + "attn_k.bias", c.n_kv_heads);
    permute(b + "attn_q_norm.weight", 1);
    permute(b + "attn_k_norm.weight", 1);
  }
}

// Adds `rope_freqs.weight` to `table`: the divisors `scaling` gives, as
// llama.cpp's converter derives them, stored little-endian in `storage`
// like a file's tensor. Refuses divisors that are not finite and positive.
void AddRopeFreqs(const model::ModelConfig& c, const Llama3RopeScaling& scaling,
                  const std::string& label, TensorTable& table, LoadedStorage& storage) {
  // The divisors are sized by config.json alone: check its heads against
  // the file's first q projection before allocating what a hostile
  // head_dim would ask for.
  const auto q = table.find("blk.0.attn_q.weight");
  if (q == table.end() || q->second.shape.empty() ||
      q->second.shape[0] != int64_t{c.n_heads} * c.head_dim) {
    throw CheckpointError(label +
                          ": model.layers.0.self_attn.q_proj.weight is missing or does not have "
                          "num_attention_heads x head_dim rows (" +
                          std::to_string(int64_t{c.n_heads} * c.head_dim) + ")");
  }
  const std::vector<float> divisors = Llama3FreqDivisors(scaling, c.rope_base, c.rotary_dim());
  for (size_t i = 0; i < divisors.size(); ++i) {
    if (!(divisors[i] > 0.0f) || std::isinf(divisors[i])) {
      throw CheckpointError(label + ": config.json rope_scaling gives divisor " +
                            std::to_string(divisors[i]) + " for rotary frequency " +
                            std::to_string(i) + " (finite positive divisors only)");
    }
  }
  std::vector<std::byte> le(divisors.size() * sizeof(float));
  std::memcpy(le.data(), divisors.data(), le.size());
  numerics::SwapLittleEndianInPlace(le, model::DType::kF32);  // as a file holds it
  storage.buffers.push_back(std::move(le));
  FileTensor t;
  t.dtype = model::DType::kF32;
  t.shape = {static_cast<int64_t>(divisors.size())};
  t.data = storage.buffers.back().data();
  if (!table.emplace("rope_freqs.weight", std::move(t)).second) {
    throw CheckpointError(label +
                          ": the file holds a rope_freqs tensor and config.json sets rope_scaling");
  }
}

}  // namespace

void ParseSafetensors(std::span<const std::byte> bytes, const std::string& label,
                      TensorTable& table) {
  ByteReader r(bytes, label);
  const uint64_t n = r.U64("the header length");
  if (n > r.remaining()) {
    r.Fail("header length " + std::to_string(n) + " exceeds the " + std::to_string(r.remaining()) +
           " bytes that follow");
  }
  if (n > kMaxHeaderBytes) r.Fail("header length " + std::to_string(n) + " is implausibly large");
  const std::string_view header = r.Bytes(n, "the JSON header");
  const json j = ParseJson(header, label, "the header");
  if (!j.is_object()) throw CheckpointError(label + ": the header is not a JSON object");
  const std::byte* data = bytes.data() + 8 + n;
  const uint64_t data_size = bytes.size() - 8 - n;
  for (const auto& item : j.items()) {
    // Named: clang 14 cannot capture structured bindings in lambdas.
    const std::string& name = item.key();
    const json& info = item.value();
    if (name == "__metadata__") continue;
    auto fail = [&](const std::string& what) -> void {
      throw CheckpointError(
          std::string(label).append(": tensor '").append(name).append("' ").append(what));
    };
    if (!info.is_object() || !info.contains("dtype") || !info["dtype"].is_string() ||
        !info.contains("shape") || !info["shape"].is_array() || !info.contains("data_offsets") ||
        !info["data_offsets"].is_array() || info["data_offsets"].size() != 2) {
      fail("needs 'dtype' (a string), 'shape' (a list) and 'data_offsets' (two integers)");
    }
    FileTensor t;
    t.dtype = ParseDTypeName(info["dtype"].get<std::string>(), label, name);
    const json& shape = info["shape"];
    if (shape.empty() || shape.size() > 4)
      fail("has " + std::to_string(shape.size()) + " dimensions (1 to 4 allowed)");
    uint64_t elements = 1;
    for (const json& d : shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() == 0 ||
          d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
        fail("has dimension " + d.dump() + " (positive integers only)");
      }
      t.shape.push_back(d.get<int64_t>());
      elements = CheckedMul(elements, d.get<uint64_t>(), label,
                            ("the size of tensor '" + EscapeControlBytes(name) + "'").c_str());
    }
    const uint64_t nbytes =
        CheckedMul(elements, numerics::DTypeSize(t.dtype), label,
                   ("the size of tensor '" + EscapeControlBytes(name) + "'").c_str());
    const json& offs = info["data_offsets"];
    if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned())
      fail("has data_offsets that are not unsigned integers");
    const uint64_t begin = offs[0].get<uint64_t>(), end = offs[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      fail("has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
           "] outside the data section of " + std::to_string(data_size) + " bytes");
    }
    if (end - begin != nbytes) {
      fail("has " + std::to_string(end - begin) + " bytes of data but its shape and dtype need " +
           std::to_string(nbytes));
    }
    t.data = data + begin;
    if (!table.emplace(name, std::move(t)).second) fail("appears twice");
  }
}

model::ModelWeights BindSafetensors(const std::string& config_json, TensorTable& hf_table,
                                    const std::string& label,
                                    std::shared_ptr<LoadedStorage> storage) {
  const json j = ParseJson(config_json, label, "config.json");
  const HfConfig hf = ConfigFromJson(j, label, hf_table);
  const model::ModelConfig& config = hf.model;
  CheckConfig(config, label);
  const HfArchitecture& arch = *FindHfArchitecture(j["architectures"][0].get<std::string>());
  TensorTable table;
  for (auto& [hf_name, t] : hf_table) {
    // Older exports saved RoPE's derived inverse frequencies; the engine
    // computes its own from rope_theta.
    const std::string inv_freq = "rotary_emb.inv_freq";
    if (hf_name.size() > inv_freq.size() &&
        hf_name.compare(hf_name.size() - inv_freq.size(), inv_freq.size(), inv_freq) == 0) {
      continue;
    }
    const std::string name = GgufNameFromHf(hf_name, arch.family);
    if (name.empty()) {
      throw CheckpointError(std::string(label)
                                .append(": tensor '")
                                .append(hf_name)
                                .append("' is not one the engine knows how to place"));
    }
    if (!table.emplace(name, t).second) {
      throw CheckpointError(std::string(label)
                                .append(": tensor '")
                                .append(hf_name)
                                .append("' duplicates another tensor's place"));
    }
  }
  if (hf.qk_rows_unpermuted) PermuteQkRowsBack(config, table, *storage);
  if (hf.rope_scaling) AddRopeFreqs(config, *hf.rope_scaling, label, table, *storage);
  LoadedStorage& buffers = *storage;
  model::ModelWeights w = BindTensors(config, table, label, std::move(storage));
  if (arch.norm_weight_minus_one) AddOneToNormWeights(w, buffers);
  return w;
}

model::ModelWeights LoadSafetensorsDir(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path root(dir);
  const std::string config_text = ReadText((root / "config.json").string());
  auto storage = std::make_shared<LoadedStorage>();
  TensorTable table;
  const fs::path index = root / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::is_regular_file(index, ec)) {
    const json j = ParseJson(ReadText(index.string()), index.string(), "the index");
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
      throw CheckpointError(index.string() + ": lacks a 'weight_map' object");
    }
    std::set<std::string> shards;
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (!file.is_string())
        throw CheckpointError(index.string() + ": the shard of '" + name + "' is not a string");
      const std::string f = file.get<std::string>();
      // Shards are file names beside the index: never a path elsewhere.
      if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..") {
        throw CheckpointError(index.string() + ": shard name '" + f + "' is not a plain file name");
      }
      shards.insert(f);
    }
    for (const std::string& f : shards) {
      const auto file = MappedFile::Open((root / f).string());
      ParseSafetensors(file->bytes(), file->path(), table);
      storage->files.push_back(file);
    }
    for (const auto& [name, file] : j["weight_map"].items()) {
      if (table.count(name) == 0) {
        throw CheckpointError(index.string() + ": tensor '" + name + "' is not in its shard " +
                              file.get<std::string>());
      }
    }
  } else {
    const auto file = MappedFile::Open((root / "model.safetensors").string());
    ParseSafetensors(file->bytes(), file->path(), table);
    storage->files.push_back(file);
  }
  return BindSafetensors(config_text, table, dir, storage);
}

model::ModelWeights LoadSafetensorsFile(const std::string& path) {
  const auto file = MappedFile::Open(path);
  TensorTable table;
  ParseSafetensors(file->bytes(), path, table);
  auto storage = std::make_shared<LoadedStorage>();
  storage->files.push_back(file);
  const auto config = std::filesystem::path(path).parent_path() / "config.json";
  return BindSafetensors(ReadText(config.string()), table, path, storage);
}

namespace {

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
  ForEachPresent(weights, [&](const std::string& name, model::TensorView& v) {
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

// Returns `w` with each Gemma norm weight replaced by F32 (w - 1), kept in
// `values`: transformers' Gemma RMSNorm multiplies by (1 + w). Throws
// CheckpointError naming the first element for which (w - 1) + 1 is not w
// in F32, which the file could then not give back exactly.
model::ModelWeights NormWeightsMinusOne(const model::ModelWeights& w,
                                        std::vector<std::vector<float>>& values) {
  model::ModelWeights out = w;
  ForEachPresent(out, [&](const std::string& name, model::TensorView& v) {
    if (!IsOnePlusNorm(name)) return;
    std::vector<float> h(static_cast<size_t>(v.elements()));
    v.ReadF32(0, v.elements(), h.data());
    for (size_t i = 0; i < h.size(); ++i) {
      const float x = h[i];
      h[i] = x - 1.0f;
      if (std::bit_cast<uint32_t>(h[i] + 1.0f) != std::bit_cast<uint32_t>(x)) {
        throw CheckpointError("cannot write norm weight '" + name + "' element " +
                              std::to_string(i) + " (" + std::to_string(x) +
                              ") as transformers' w - 1: F32 (w - 1) + 1 would not give it back");
      }
    }
    values.push_back(std::move(h));
    v = model::TensorView{model::DType::kF32, v.shape,
                          reinterpret_cast<const std::byte*>(values.back().data())};
  });
  return out;
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
