// Reading the Hugging Face layout: the safetensors files (every offset and
// size checked), their index, and the binding of their tensors to the
// engine's under config.json's configuration (hf_config.h).
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
#include "engine/formats/gemma_norms.h"
#include "engine/formats/gguf_writer.h"
#include "engine/formats/hf_config.h"
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

model::DType ParseDTypeName(const std::string& s, const std::string& label,
                            const std::string& tensor) {
  if (s == "F32") return model::DType::kF32;
  if (s == "F16") return model::DType::kF16;
  if (s == "BF16") return model::DType::kBF16;
  throw CheckpointError(label + ": tensor '" + tensor + "' has dtype '" + s +
                        "', which is not supported (F32, F16 and BF16 are)");
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

}  // namespace samebits::formats
