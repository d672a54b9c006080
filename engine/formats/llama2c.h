// llama2.c checkpoints (`run.c`'s legacy version-0 `.bin`): a header of 7
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
// seq_len; a negative vocab_size means a separate classifier), then the f32
// weights in run.c's order. RoPE is run.c's: adjacent pairs (i, i+1) rotated
// by 1/10000^(i mod head_size / head_size), the engine's `kInterleaved`.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "engine/model/weights.h"

namespace samebits::formats {

// Returns the weights described by llama2.c `bytes` (views into `bytes`,
// which `keep_alive` must own). Trailing bytes (run.c's legacy RoPE
// tables) are allowed. Throws CheckpointError naming `label`.
model::ModelWeights LoadLlama2cBytes(std::span<const std::byte> bytes,
                                     std::shared_ptr<const void> keep_alive,
                                     const std::string& label);

// Returns the weights of the llama2.c file at `path`; when a
// `tokenizer.bin` beside it has exactly vocab_size pieces it becomes the
// vocabulary.
model::ModelWeights LoadLlama2cFile(const std::string& path);

}  // namespace samebits::formats
