#include "engine/formats/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "engine/formats/gguf.h"
#include "engine/formats/llama2c.h"
#include "engine/formats/safetensors.h"
#include "engine/formats/synthetic_cache.h"
#include "engine/model/quantized_weights.h"
#include "engine/model/synthetic.h"

namespace samebits::formats {

std::string EscapeControlBytes(std::string_view text) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

namespace {

// `synthetic:NAME` or `synthetic:NAME-TYPE` (BF16 when no type is given).
// A quantized TYPE (q8_0, q4_k, ...) quantizes the F32 weights' matrices
// and embedding as `export --type` does.
model::ModelWeights LoadSynthetic(const std::string& spec, const std::string& rest,
                                  const std::string& cache_dir) {
  std::string name = rest;
  model::WeightType type{false, numerics::QuantType::kQ8_0, model::DType::kBF16};
  if (const auto dash = rest.rfind('-'); dash != std::string::npos) {
    if (!model::ParseWeightType(rest.substr(dash + 1), &type)) {
      throw CheckpointError("checkpoint '" + spec + "': unknown type '" + rest.substr(dash + 1) +
                            "' (use " + model::WeightTypeChoices() + ")");
    }
    name = rest.substr(0, dash);
  }
  try {
    auto synthesise = [&] {
      if (!type.quantized) return model::MakeSyntheticWeights(name, type.dtype);
      return model::ConvertWeights(model::MakeSyntheticWeights(name, model::DType::kF32), type,
                                   nullptr);
    };
    if (cache_dir.empty()) return synthesise();
    return LoadSyntheticCached(spec, model::SyntheticConfig(name), cache_dir, synthesise);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError("checkpoint '" + spec + "': " + e.what());
  }
}

// Returns the weights of a bare path, recognised by its contents: a
// directory is safetensors, "GGUF" starts a GGUF file, a little-endian
// header length followed by '{' starts a safetensors file, and anything
// else is tried as llama2.c.
model::ModelWeights LoadByContent(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return LoadSafetensorsDir(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw CheckpointError("checkpoint '" + path +
                          "': no such file, and not a spec (synthetic:NAME[-DTYPE], gguf:PATH, "
                          "safetensors:DIR or llama2c:PATH)");
  }
  char head[9] = {};
  in.read(head, sizeof head);
  const auto got = in.gcount();
  if (got >= 4 && std::string_view(head, 4) == "GGUF") return LoadGgufFile(path);
  if (got == 9 && head[8] == '{') return LoadSafetensorsFile(path);
  return LoadLlama2cFile(path);
}

}  // namespace

model::ModelWeights LoadCheckpoint(const std::string& spec) {
  return LoadCheckpoint(spec, "");
}

model::ModelWeights LoadCheckpoint(const std::string& spec,
                                   const std::string& synthetic_cache_dir) {
  auto starts = [&](const char* prefix) { return spec.rfind(prefix, 0) == 0; };
  auto rest = [&](const char* prefix) { return spec.substr(std::string_view(prefix).size()); };
  if (starts("synthetic:")) return LoadSynthetic(spec, rest("synthetic:"), synthetic_cache_dir);
  if (starts("gguf:")) return LoadGgufFile(rest("gguf:"));
  if (starts("llama2c:")) return LoadLlama2cFile(rest("llama2c:"));
  if (starts("safetensors:")) {
    const std::string path = rest("safetensors:");
    std::error_code ec;
    return std::filesystem::is_directory(path, ec) ? LoadSafetensorsDir(path)
                                                   : LoadSafetensorsFile(path);
  }
  if (spec.empty()) throw CheckpointError("checkpoint '': empty spec");
  return LoadByContent(spec);
}

}  // namespace samebits::formats
