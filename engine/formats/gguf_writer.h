// Writes any checkpoint (synthetic included) as GGUF v3 in llama.cpp's
// conventions: tensor names from `ForEachTensor`, dimensions innermost
// first, the standard `{arch}.*` keys and `tokenizer.ggml.*` when a
// vocabulary exists. What llama.cpp has no key for (rope style overrides,
// sliding windows, no-RoPE layers, parallel blocks, logit scale, LayerNorm,
// a dense FFN beside experts, per-layer MoE flags) is written under
// `samebits.*` (gguf_config.h): our loader reads it back bit for bit, other
// engines ignore it and will compute something else for such models.
// Gemma 2/3's operations are stated as llama.cpp states them: implied by
// the architecture name (`architectures.h`), with the soft-caps and the
// local RoPE base in its `{arch}.*` keys.
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

// Returns the window of the layers that slide (0 when none does; the
// first one's when they differ, which GGUF and transformers' classes
// cannot state: one `sliding_window` per model).
int SharedSlidingWindow(const model::ModelConfig& c);

// Returns the switches of `c` a GGUF file cannot state, comma separated
// (empty when every one can be written): the Gemma operations (post-norms,
// GELU, the embedding scale, soft-caps, a local RoPE base) have no key of
// their own, so they are written only when `c.arch` is an architecture of
// the table that implies exactly them. Writing anything else would load as
// another model.
std::string GgufUnwritableSwitches(const model::ModelConfig& c);

// Returns the GGUF v3 bytes of `weights`.
std::vector<std::byte> GgufBytes(const model::ModelWeights& weights,
                                 const GgufWriteOptions& options = {});

// Writes `weights` to `path` as GGUF v3. Throws CheckpointError naming
// `path` when the file cannot be written.
void WriteGguf(const model::ModelWeights& weights, const std::string& path,
               const GgufWriteOptions& options = {});

}  // namespace samebits::formats
