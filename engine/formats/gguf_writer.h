// Writes any checkpoint (synthetic included) as GGUF v3 in llama.cpp's
// conventions: tensor names from `ForEachTensor`, dimensions innermost
// first, the standard `{arch}.*` keys and `tokenizer.ggml.*` when a
// vocabulary exists. What llama.cpp has no key for (rope style overrides,
// sliding windows, no-RoPE layers, parallel blocks, logit scale, LayerNorm,
// a dense FFN beside experts, per-layer MoE flags) is written under
// `samebits.*` (gguf_config.h): our loader reads it back bit for bit, other
// engines ignore it and will compute something else for such models.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/model/weights.h"

namespace samebits::formats {

struct GgufWriteOptions {
  // Write each expert as its own tensor (`blk.N.ffn_gate.E.weight`, the
  // form of older Mixtral conversions) instead of merged `ffn_gate_exps`.
  bool per_expert_tensors = false;
};

// Returns the GGUF v3 bytes of `weights`.
std::vector<std::byte> GgufBytes(const model::ModelWeights& weights,
                                 const GgufWriteOptions& options = {});

// Writes `weights` to `path` as GGUF v3. Throws CheckpointError naming
// `path` when the file cannot be written.
void WriteGguf(const model::ModelWeights& weights, const std::string& path,
               const GgufWriteOptions& options = {});

}  // namespace samebits::formats
