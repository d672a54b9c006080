// A model's tensors: views into memory owned by `ModelWeights::storage`
// (a heap buffer for synthetic checkpoints, a memory map for files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model/config.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::formats {
class Vocabulary;  // engine/formats/vocabulary.h
}  // namespace samebits::formats

namespace samebits::model {

// A tensor as the engine sees it: row-major with `shape[0]` the outermost
// dimension, so a matrix is `[out][in]`. `data` is null when absent.
struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
  // Set when the checkpoint stores this tensor block-quantized (GGUF Q8_0,
  // Q4_K, ...): its block type, and its blocks at `data` (== `quant_blocks`),
  // still in the file's memory map or the exporter's buffer. No f32 copy is
  // held: the kernels dequantize blocks into registers as they read them
  // (KernelTable::gemv_quant), and `At` / `ReadF32` dequantize on demand.
  // `dtype` means nothing then.
  bool quantized = false;
  numerics::QuantType quant_type = numerics::QuantType::kQ8_0;
  const std::byte* quant_blocks = nullptr;

  bool present() const { return data != nullptr; }
  // Returns the product of the dimensions (1 for a scalar, 0 when absent).
  int64_t elements() const;
  // Returns the stored size: elements() times the element size, or
  // quant_bytes() when quantized.
  size_t bytes() const;
  // Returns the size of the quantized blocks (0 when not quantized).
  size_t quant_bytes() const;
  // Returns element `i` converted exactly to f32 (for a quantized tensor,
  // ggml's dequantized value; this dequantizes its whole block).
  float At(int64_t i) const;
  // Writes elements [offset, offset + n) converted exactly to f32 to `out`.
  // For a quantized tensor `offset` and `n` must be multiples of the block
  // size (a whole row is); throws std::logic_error otherwise.
  void ReadF32(int64_t offset, int64_t n, float* out) const;
};

// Returns `view`'s bytes as files and hashes store them, each element
// little-endian: its memory on a little-endian host, a reordered copy in
// `scratch` on a big-endian one. Throws std::runtime_error for a type a
// big-endian host cannot reorder.
std::span<const std::byte> LittleEndianBytes(const TensorView& view,
                                             std::vector<std::byte>& scratch);

struct LayerWeights {
  TensorView attn_norm, attn_norm_bias;  // (d_model); bias for LayerNorm
  TensorView wq;                         // (n_heads * head_dim, d_model)
  TensorView wk, wv;                     // (n_kv_heads * head_dim, d_model)
  TensorView wo;                         // (d_model, n_heads * head_dim)
  TensorView q_norm, k_norm;             // (head_dim), with qk_norm
  TensorView q_bias;                     // (n_heads * head_dim), with qkv_bias
  TensorView k_bias, v_bias;             // (n_kv_heads * head_dim), with qkv_bias
  TensorView ffn_norm, ffn_norm_bias;    // (d_model); absent in parallel blocks
  TensorView post_attn_norm;             // (d_model), with post_norms
  TensorView post_ffn_norm;              // (d_model), with post_norms
  // Dense SwiGLU.
  TensorView ffn_gate, ffn_up;  // (ffn_dim, d_model)
  TensorView ffn_down;          // (d_model, ffn_dim)
  // Mixture of experts.
  TensorView router;                  // (n_experts, d_model)
  TensorView expert_gate, expert_up;  // (n_experts, expert_ffn_dim, d_model)
  TensorView expert_down;             // (n_experts, d_model, expert_ffn_dim)
  TensorView shared_gate, shared_up;  // (shared_expert_ffn_dim, d_model)
  TensorView shared_down;             // (d_model, shared_expert_ffn_dim)
};

struct ModelWeights {
  ModelConfig config;
  TensorView token_embedding;  // (vocab_size, d_model)
  std::vector<LayerWeights> layers;
  TensorView output_norm, output_norm_bias;  // (d_model)
  TensorView output;                         // (vocab_size, d_model); absent when tied
  TensorView rope_freqs;                     // (rot_dim / 2), with rope_freq_factors
  // Keeps the memory behind every view alive.
  std::shared_ptr<const void> storage;
  // The checkpoint's tokenizer, when the file carries one (GGUF's
  // `tokenizer.ggml.*`, llama2.c's tokenizer.bin); null otherwise.
  std::shared_ptr<const formats::Vocabulary> vocabulary;

  // Returns the output projection: `output`, or the embedding when tied.
  const TensorView& output_projection() const {
    return config.tied_output ? token_embedding : output;
  }
};

}  // namespace samebits::model
