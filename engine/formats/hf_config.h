// config.json, the Hugging Face layout's configuration, read into the
// engine's model configuration: the transformers class (architectures.h's
// `kHfArchitectures`) decides what each key means and what is implied when
// a key is absent; `samebits_*` keys (written by WriteSafetensors) carry
// what transformers has no key for. Every key is type- and range-checked
// and a fault names the file and the key (CheckpointError).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "engine/formats/hf_rope.h"
#include "engine/formats/tensor_table.h"
#include "engine/model/config.h"

namespace samebits::formats {

// A configuration as config.json states it: the engine's, plus what turns
// the file's tensors into the engine's (rows to permute, divisors to derive).
struct HfConfig {
  model::ModelConfig model;
  bool qk_rows_unpermuted = false;
  std::optional<Llama3RopeScaling> rope_scaling;
};

// Returns the configuration `j` (config.json's parsed text, from the file
// `label`) states; `table`, the file's HF-named tensors, bounds the layer
// count. Throws CheckpointError naming `label` and the key at fault.
HfConfig ConfigFromJson(const nlohmann::json& j, const std::string& label,
                        const TensorTable& table);

}  // namespace samebits::formats
