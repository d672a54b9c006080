#include "engine/formats/safetensors.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/formats/architectures.h"
#include "engine/formats/byte_reader.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/hf_names.h"
#include "engine/formats/mapped_file.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/tensor_spec.h"

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
  if (c.Has("rope_scaling"))
    c.Fail("config.json sets rope_scaling, which the engine does not implement");
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

// Reads the rotary embedding, the norm and the switches of the block.
void ReadRopeNormAndSwitches(const Config& c, const HfArchitecture& arch, model::ModelConfig& m) {
  m.rope_dim = c.IntOr("samebits_rope_dim", 0);
  m.rope_base = c.FloatOr("rope_theta", 10000.0f);
  // transformers' llama family rotates halves (rotate_half) of unpermuted weights.
  m.rope_style = model::RopeStyle::kNeox;
  const std::string style = c.StringOr("samebits_rope_style", "neox");
  if (style == "interleaved") {
    m.rope_style = model::RopeStyle::kInterleaved;
  } else if (style != "neox") {
    c.Fail("samebits_rope_style is '" + style + "' (expected 'interleaved' or 'neox')");
  }
  const std::string norm = c.StringOr("samebits_norm", "rms");
  if (norm == "layer") {
    m.norm = model::NormKind::kLayerNorm;
    m.norm_eps = c.FloatOr("layer_norm_eps", 1e-5f);
  } else if (norm == "rms") {
    m.norm_eps = c.FloatOr("rms_norm_eps", 1e-6f);
  } else {
    c.Fail("samebits_norm is '" + norm + "' (expected 'rms' or 'layer')");
  }
  m.qk_norm = c.BoolOr("samebits_qk_norm", arch.qk_norm);
  m.parallel_block = c.BoolOr("samebits_parallel_block", false);
  m.logit_scale = c.FloatOr("samebits_logit_scale", 1.0f);
  m.max_seq_len = c.IntOr("max_position_embeddings", 4096, 1);
  m.tied_output = c.BoolOr("tie_word_embeddings", false);
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

model::ModelConfig ConfigFromJson(const json& j, const std::string& label,
                                  const TensorTable& table) {
  if (!j.is_object()) throw CheckpointError(label + ": config.json is not a JSON object");
  const Config c(j, label);
  model::ModelConfig m;
  const HfArchitecture& arch = ReadArchitecture(c, m);
  m.name = c.StringOr("samebits_name", std::filesystem::path(label).filename().string());
  const int n_layers = ReadShape(c, table, m);
  ReadRopeNormAndSwitches(c, arch, m);
  ReadFeedForward(c, arch, n_layers, m);
  ReadSamebitsKeys(c, label, n_layers, m);
  return m;
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

// Returns the transformers family a configuration is written as: experts
// with q/k norms (or of Qwen3-MoE's GGUF architecture) are Qwen3-MoE, other
// experts Mixtral, the rest Llama.
HfFamily HfFamilyToWrite(const model::ModelConfig& c) {
  if (c.n_experts <= 0) return HfFamily::kLlama;
  const bool qwen3moe = c.qk_norm || c.arch == HfArchitectureOf(HfFamily::kQwen3Moe).gguf_arch;
  return qwen3moe ? HfFamily::kQwen3Moe : HfFamily::kMixtral;
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
    // Named copies: clang 14 cannot capture structured bindings in lambdas.
    const std::string name = item.key();
    const json& info = item.value();
    if (name == "__metadata__") continue;
    auto fail = [&](const std::string& what) -> void {
      throw CheckpointError(label + ": tensor '" + name + "' " + what);
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
  const model::ModelConfig config = ConfigFromJson(j, label, hf_table);
  CheckConfig(config, label);
  TensorTable table;
  for (auto& [hf_name, t] : hf_table) {
    // Older exports saved RoPE's derived inverse frequencies; the engine
    // computes its own from rope_theta.
    const std::string inv_freq = "rotary_emb.inv_freq";
    if (hf_name.size() > inv_freq.size() &&
        hf_name.compare(hf_name.size() - inv_freq.size(), inv_freq.size(), inv_freq) == 0) {
      continue;
    }
    const std::string name = GgufNameFromHf(hf_name);
    if (name.empty()) {
      throw CheckpointError(label + ": tensor '" + hf_name +
                            "' is not one the engine knows how to place");
    }
    if (!table.emplace(name, t).second) {
      throw CheckpointError(label + ": tensor '" + hf_name + "' duplicates another tensor's place");
    }
  }
  return BindTensors(config, table, label, std::move(storage));
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

// One HF tensor: a whole tensor, or one expert of a 3-D expert tensor.
struct HfPart {
  std::string name;
  model::TensorView view;
};

// Splits every present tensor into HF tensors (experts one by one).
std::vector<HfPart> SplitIntoHfTensors(const model::ModelWeights& weights, HfFamily family) {
  std::vector<HfPart> parts;
  model::ModelWeights& w = const_cast<model::ModelWeights&>(weights);  // slots only read here
  model::ForEachTensor(weights.config, [&](const model::TensorSpec& spec) {
    if (spec.layer >= static_cast<int>(w.layers.size())) return;
    const model::TensorView& v = spec.slot(w);
    if (!v.present()) return;
    if (spec.shape.size() == 3) {
      const std::vector<int64_t> one(v.shape.begin() + 1, v.shape.end());
      const size_t stride = v.bytes() / static_cast<size_t>(v.shape[0]);
      for (int64_t e = 0; e < v.shape[0]; ++e) {
        parts.push_back({HfNameFromGguf(spec.name, family, static_cast<int>(e)),
                         model::TensorView{v.dtype, one, v.data + e * stride}});
      }
    } else {
      parts.push_back({HfNameFromGguf(spec.name, family, -1), v});
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
      const model::TensorView& v = parts[i].view;
      header[parts[i].name] = {{"dtype", DTypeTag(v.dtype)},
                               {"shape", v.shape},
                               {"data_offsets", {offset, offset + v.bytes()}}};
      offset += v.bytes();
      views.push_back(&v);
      weight_map[parts[i].name] = file;
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

// Sets transformers' keys of the family's class.
void PutHfKeys(const model::ModelWeights& weights, HfFamily family, json& j) {
  const model::ModelConfig& c = weights.config;
  const HfArchitecture& arch = HfArchitectureOf(family);
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
}

// Sets what transformers has no key for, which only this engine reads back.
void PutSamebitsKeys(const model::ModelConfig& c, json& j) {
  j["samebits_arch"] = c.arch;
  j["samebits_name"] = c.name;
  j["samebits_rope_style"] = c.rope_style == model::RopeStyle::kNeox ? "neox" : "interleaved";
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

}  // namespace

void WriteSafetensors(const model::ModelWeights& quantized, const std::string& dir, int shards) {
  namespace fs = std::filesystem;
  // Safetensors has no block types: quantized tensors go as their F32 values.
  const model::ModelWeights weights = model::DequantizedWeights(quantized);
  std::error_code ec;
  fs::create_directories(dir, ec);
  const HfFamily family = HfFamilyToWrite(weights.config);
  const std::vector<HfPart> parts = SplitIntoHfTensors(weights, family);
  WriteShards(parts, dir, std::max(1, std::min<int>(shards, static_cast<int>(parts.size()))));
  json j;
  PutHfKeys(weights, family, j);
  PutSamebitsKeys(weights.config, j);
  std::ofstream out(fs::path(dir) / "config.json", std::ios::trunc);
  out << j.dump(2) << "\n";
  if (!out) throw CheckpointError(dir + ": cannot write config.json");
}

}  // namespace samebits::formats
