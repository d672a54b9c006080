// The tensors a file holds, by GGUF-convention name, and their binding onto
// the model's `ForEachTensor` list. Every format's loader builds a table
// (GGUF directly; safetensors and llama2.c by translating their names), and
// one binder checks it against the configuration: every required tensor
// present with exactly the expected shape, no tensor left over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/weights.h"

namespace samebits::formats {

struct FileTensor {
  model::DType dtype = model::DType::kF32;
  std::vector<int64_t> shape;  // the engine's row-major order, outermost first
  const std::byte* data = nullptr;
  bool used = false;
  // A block-quantized tensor: `data` points to its blocks (bounds already
  // checked by the parser) and `dtype` is unused.
  bool quantized = false;
  numerics::QuantType quant_type = numerics::QuantType::kQ8_0;
};

using TensorTable = std::map<std::string, FileTensor>;

// Memory behind loaded weights: the file (or files) the views point into,
// plus buffers the loader filled itself (gathered per-expert tensors).
struct LoadedStorage {
  std::vector<std::shared_ptr<const void>> files;
  std::vector<std::vector<std::byte>> buffers;
};

// Returns weights whose views point into `table`'s data (a quantized
// tensor's view points at its blocks, see model::QuantizedView). Fused
// tensors (Phi-3: `blk.N.attn_qkv.weight`, rows q then k then v, and an
// `blk.N.ffn_up.weight` of 2 * ffn_dim rows without `ffn_gate`, rows gate
// then up) are read as views of their parts. An expert tensor
// `blk.N.ffn_gate_exps.weight` missing from the table is gathered from
// per-expert tensors `blk.N.ffn_gate.E.weight` (E = 0 .. n_experts-1, each
// of the per-expert shape and one dtype) into a buffer in `storage`.
// Throws CheckpointError naming `label` for a missing required tensor, a
// shape that differs from the configuration's, or a tensor the
// configuration has no place for. `config` must already be validated.
model::ModelWeights BindTensors(const model::ModelConfig& config, TensorTable& table,
                                const std::string& label, std::shared_ptr<LoadedStorage> storage);

// Returns "[a, b, c]".
std::string ShapeText(const std::vector<int64_t>& shape);

// Throws CheckpointError "LABEL: PROBLEM; FIX" listing every problem that
// `config.Validate()` reports, when there is one.
void CheckConfig(const model::ModelConfig& config, const std::string& label);

}  // namespace samebits::formats
