#include "engine/formats/checkpoint.h"

#include <stdexcept>

#include "engine/model/synthetic.h"

namespace samebits::formats {
namespace {

// `synthetic:NAME` or `synthetic:NAME-DTYPE` (BF16 when no dtype is given).
model::ModelWeights LoadSynthetic(const std::string& spec, const std::string& rest) {
  std::string name = rest;
  model::DType dtype = model::DType::kBF16;
  if (const auto dash = rest.rfind('-'); dash != std::string::npos) {
    if (!numerics::ParseDType(rest.substr(dash + 1), &dtype)) {
      throw CheckpointError("checkpoint '" + spec + "': unknown dtype '" + rest.substr(dash + 1) +
                            "' (use f32, f16 or bf16)");
    }
    name = rest.substr(0, dash);
  }
  try {
    return model::MakeSyntheticWeights(name, dtype);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError("checkpoint '" + spec + "': " + e.what());
  }
}

}  // namespace

model::ModelWeights LoadCheckpoint(const std::string& spec) {
  const std::string prefix = "synthetic:";
  if (spec.rfind(prefix, 0) == 0) return LoadSynthetic(spec, spec.substr(prefix.size()));
  throw CheckpointError("checkpoint '" + spec +
                        "': unknown checkpoint spec (expected synthetic:NAME[-DTYPE], "
                        "gguf:PATH, safetensors:DIR or llama2c:PATH)");
}

}  // namespace samebits::formats
