// safetensors + config.json (the Hugging Face layout): one
// `model.safetensors`, or shards listed by `model.safetensors.index.json`.
// The architecture classes are architectures.h's `kHfArchitectures`;
// HF llama applies RoPE NeoX-style (rotate_half) to unpermuted weights, so
// these load as `kNeox`; our exports of adjacent-pair models hold the same
// unpermuted rows and say `samebits_qk_layout: "unpermuted"`, on which the
// loader puts llama.cpp's row order back and rotates adjacent pairs
// (hf_rope.h). `rope_scaling` of rope_type llama3 becomes the engine's
// rope_freqs divisors, as llama.cpp's converter derives them. Per-expert
// tensors are gathered into the engine's 3-D expert tensors. Keys
// `samebits_*` in config.json (written by WriteSafetensors) carry features
// transformers has no key for.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/formats/tensor_table.h"
#include "engine/model/weights.h"

namespace samebits::formats {

// Adds the tensors of one safetensors file (`bytes`, named `label`) to
// `table`, under their HF names. Checks the header length, the JSON, every
// dtype (F32, F16, BF16), shape and data offset. Throws CheckpointError.
void ParseSafetensors(std::span<const std::byte> bytes, const std::string& label,
                      TensorTable& table);

// Returns the weights described by `config_json` (the text of config.json)
// and the HF-named tensors of `table`. Throws CheckpointError naming `label`.
model::ModelWeights BindSafetensors(const std::string& config_json, TensorTable& table,
                                    const std::string& label,
                                    std::shared_ptr<LoadedStorage> storage);

// Returns the weights in directory `dir` (config.json and model.safetensors
// or model.safetensors.index.json with its shards).
model::ModelWeights LoadSafetensorsDir(const std::string& dir);

// Returns the weights of one .safetensors file, with config.json from its
// directory.
model::ModelWeights LoadSafetensorsFile(const std::string& path);

// Returns the switches of `c` that the transformers class it is written as
// cannot state, comma separated; empty when every one can. Issue 25's
// classes (Gemma 2/3, Cohere2, Phi-3) are written only for models whose
// switches are the class's; the others carry what transformers has no key
// for in `samebits_*` keys, but not the Gemma operations. `rope_freqs`
// (Llama 3.1's factors as a GGUF tensor) is named for issue 25's classes
// only; the others state it as `rope_scaling` (WriteSafetensors).
std::string SafetensorsUnwritableSwitches(const model::ModelConfig& c);

// Writes `weights` to directory `dir` (created if needed) as config.json and
// model.safetensors, or, with `shards` > 1, as that many shard files plus
// model.safetensors.index.json, under the names and keys of the class
// (architectures.h) the configuration is written as. Gemma's norm weights
// are written F32 as w - 1. An adjacent-pair model written as a
// rotate_half class (Llama, Mixtral, Qwen3-MoE) gets its q/k rows (and
// biases and norms) unpermuted, with `samebits_qk_layout`; `rope_freqs` is
// written as the llama3 `rope_scaling` that gives back every divisor bit
// for bit. Throws CheckpointError on an I/O failure, for a model with
// switches SafetensorsUnwritableSwitches names, rope_freqs no llama3
// parameters give (nothing written), or a norm weight whose w - 1 would
// not give back w.
void WriteSafetensors(const model::ModelWeights& weights, const std::string& dir, int shards = 1);

}  // namespace samebits::formats
