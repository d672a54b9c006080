// ggml's block-quantized weight types: their byte layouts, and one
// dequantize and one quantize routine per type, in one place. Dequantizing a
// block gives the very f32 values llama.cpp's `dequantize_row_*` gives (the
// same f32 operations in the same order, F16 scales converted exactly), and
// quantizing gives the bytes of ggml's reference quantizers
// (`quantize_row_*_ref`, no importance matrix), which is what
// `llama-quantize` writes without `--imatrix`. The formulas are written out
// in engine/numerics/README.md ("Quantized weights").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace samebits::numerics {

enum class QuantType : uint8_t { kQ8_0, kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ4_K, kQ5_K, kQ6_K };

struct QuantLayout {
  QuantType type;
  const char* name;    // ggml's spelling: "Q8_0", "Q4_K", ...
  const char* id;      // the command-line spelling: "q8_0", "q4_k", ...
  uint32_t ggml_type;  // the value in a GGUF tensor table
  int block_elements;  // weights per block (32, or 256 for the k-quants)
  int block_bytes;     // bytes per block
  uint32_t file_type;  // llama.cpp's `general.file_type` for a file mostly of this type
};

// Returns every supported type, in QuantType order.
std::span<const QuantLayout> QuantLayouts();
// Returns the layout of `type`.
const QuantLayout& LayoutOf(QuantType type);
// Returns the layout whose GGUF type is `ggml_type`, or null.
const QuantLayout* FindQuantByGgmlType(uint32_t ggml_type);
// Returns the layout spelled `id` ("q8_0", "q4_k", ...), or null.
const QuantLayout* FindQuantById(std::string_view id);
// Returns "q8_0, q4_0, ..." for help texts and messages.
std::string QuantIdList();

// ggml's get_scale_min_k4: the 6-bit scale `*sc` and min `*m` of sub-block
// `j` (0..7) of a Q4_K / Q5_K super-block's 12 packed scale bytes `q`.
void KQuantScaleMin(int j, const std::byte* q, int* sc, int* m);

// Writes the `n` weights of the blocks at `blocks` (n / block_elements whole
// blocks, `n` a multiple of block_elements) to `out`.
void DequantizeRow(QuantType type, const std::byte* blocks, int64_t n, float* out);

// Writes `n` weights `x` (a multiple of block_elements) as blocks to
// `blocks`, as ggml's reference quantizer of `type` does.
void QuantizeRow(QuantType type, const float* x, int64_t n, std::byte* blocks);

}  // namespace samebits::numerics
