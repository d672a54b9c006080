// Block-quantized tensors in the model's weights: their views (read in
// place, see TensorView::quantized), and the conversion of a whole
// checkpoint's matrices to a quantized type or a plain dtype, as
// `llama-quantize` would store them (export --type, synthetic:NAME-q4_k).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/model/weights.h"
#include "engine/numerics/quant_blocks.h"

namespace samebits::model {

// Returns a view of the `shape` tensor whose blocks of `type` are at
// `blocks` (which must outlive the view): quantized, `data` pointing at the
// blocks themselves (no f32 copy). The caller has checked that the
// innermost dimension is a multiple of the block size and that the blocks
// are all there.
TensorView QuantizedView(numerics::QuantType type, std::vector<int64_t> shape,
                         const std::byte* blocks);

// Returns `weights` with every quantized tensor replaced by an F32 copy of
// its dequantized values (for writers of formats without block types); the
// other tensors share `weights`' storage.
ModelWeights DequantizedWeights(const ModelWeights& weights);

// How ConvertWeights stores matrices: a block type, or a plain dtype.
struct WeightType {
  bool quantized = false;
  numerics::QuantType quant = numerics::QuantType::kQ8_0;
  DType dtype = DType::kF32;
};

// Returns true and sets `*out` for "q8_0", ..., "q6_k", "f32", "f16", "bf16".
bool ParseWeightType(const std::string& name, WeightType* out);
// Returns "q8_0|q4_0|...|f32|f16|bf16".
std::string WeightTypeChoices();
// Returns the same names, one each (the quantized layouts', then f32, f16, bf16).
std::vector<std::string> WeightTypeNames();

// Returns `weights` with every matrix and the token embedding stored as
// `type`, from their exact f32 values: quantized by ggml's reference
// quantizers (no importance matrix), or rounded to nearest even. Norm
// weights, biases and the MoE router keep their type, as llama-quantize
// keeps 1-D tensors and `ffn_gate_inp` in F32. Like llama-quantize, a
// k-quant tensor whose rows are not a multiple of 256 falls back to Q5_0
// (for Q4_K), Q5_1 (Q5_K) or Q8_0 (Q6_K), and a tensor whose rows fit no
// block of the type it would get is stored F16; `notes` (when not null)
// receives one line per fallback. The result shares `weights`' storage for
// the tensors it keeps.
ModelWeights ConvertWeights(const ModelWeights& weights, const WeightType& type,
                            std::vector<std::string>* notes);

}  // namespace samebits::model
