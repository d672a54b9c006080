// The one list of a model's tensors (STYLE: "one visitor over the tensors").
// Loading, synthetic generation, export, weight hashing and dtype checks all
// walk `ForEachTensor`, so a tensor is named in exactly one place.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/model/config.h"
#include "engine/model/weights.h"

namespace samebits::model {

enum class TensorKind : uint8_t {
  kMatrix,     // a projection, stored in the checkpoint's weight dtype
  kEmbedding,  // the token embedding (also a matrix)
  kNorm,       // a norm weight, norm bias or projection bias vector (F32 in synthetic checkpoints)
  kRouter,     // the MoE router (F32 in synthetic checkpoints)
};

struct TensorSpec {
  // The GGUF-convention name: "token_embd.weight", "blk.3.attn_q.weight",
  // "blk.3.ffn_gate_exps.weight", "output_norm.weight", ...
  std::string name;
  std::vector<int64_t> shape;  // row-major, outermost first
  TensorKind kind;
  int layer;      // -1 for model-level tensors
  bool required;  // false: a missing tensor keeps its view absent
  // Returns the slot in `w` that this tensor fills.
  std::function<TensorView&(ModelWeights& w)> slot;
};

// Calls `visit` for every tensor `config` implies, in a fixed order
// (embedding, then each layer's tensors, then output norm and output).
void ForEachTensor(const ModelConfig& config, const std::function<void(const TensorSpec&)>& visit);

// Calls `visit` with the name and view of every present tensor of `w`, in
// ForEachTensor's order (the tensors of a layer `w` lacks are skipped).
void ForEachPresentTensor(ModelWeights& w,
                          const std::function<void(const std::string&, TensorView&)>& visit);
void ForEachPresentTensor(const ModelWeights& w,
                          const std::function<void(const std::string&, const TensorView&)>& visit);

// Returns one message per problem with `weights` against its config's
// specs: a required tensor that is missing, or a present tensor whose shape
// differs from the spec's (each message names the tensor, both shapes and
// the model). Empty when the passes can run on `weights`.
std::vector<std::string> CheckWeights(const ModelWeights& weights);

// Returns the XXH3-64 of every present tensor in `ForEachTensor` order
// (name, dtype, shape and the elements' little-endian bytes, so every host
// agrees), as 16 lower-case hex digits.
std::string HashWeights(const ModelWeights& weights);

// Returns the number of parameters in the present tensors.
int64_t CountParameters(const ModelWeights& weights);

}  // namespace samebits::model
