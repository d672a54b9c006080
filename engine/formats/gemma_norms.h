// Gemma's norm weights as transformers' files hold them: Gemma's RMSNorm
// multiplies by (1 + w), and the file holds w - 1 (for every
// `...norm.weight`, as llama.cpp's converter decides it, q/k norms
// included), where GGUF and the engine hold w. Both directions compute in
// F32, as transformers' Gemma RMSNorm computes (1 + w.float()).
#pragma once

#include <vector>

#include "engine/formats/tensor_table.h"
#include "engine/model/weights.h"

namespace samebits::formats {

// Replaces each norm weight of `w` (read from a file: w - 1) by F32 (w + 1),
// kept in `storage`.
void AddOneToNormWeights(model::ModelWeights& w, LoadedStorage& storage);

// Returns `w` with each norm weight replaced by F32 (w - 1), kept in
// `values`. Throws CheckpointError naming the first element for which
// (w - 1) + 1 is not w in F32, which the file could then not give back
// exactly.
model::ModelWeights NormWeightsMinusOne(const model::ModelWeights& w,
                                        std::vector<std::vector<float>>& values);

}  // namespace samebits::formats
