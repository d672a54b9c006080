// Shared helpers for the model tests: the math library, a writable copy of
// a checkpoint, a trace sink that hashes every record, and the three ways of
// feeding a prompt whose results the batching contract says are identical.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/model/forward.h"
#include "engine/model/weights.h"
#include "engine/numerics/math.h"

namespace samebits::model::testing {

// Returns the portable math library (the default profile).
const numerics::MathLibrary& PortableMath();

// Returns a deep copy of `w` whose tensors live in one fresh heap buffer, so
// a test may change bytes through `MutableBytes`.
ModelWeights CloneWeights(const ModelWeights& w);

// Returns the writable bytes behind `view` (only for views of a clone).
std::byte* MutableBytes(const TensorView& view);

// Returns `n` token ids in [0, vocab) from splitmix64 of `seed`.
std::vector<int32_t> PromptTokens(int n, int vocab, uint64_t seed);

// Hashes every trace record, keyed by (layer, op, position).
class HashingTrace : public TraceSink {
 public:
  void Record(int layer, const char* op, int position, const float* data, int64_t n) override;
  std::map<std::tuple<int, std::string, int>, uint64_t> hashes;
};

// The logits of every position of a prompt, one row per position.
struct PromptRun {
  std::vector<std::vector<float>> rows;
  HashingTrace trace;
};

// Returns the run of `tokens` fed in chunks of the given sizes (the last
// chunk takes the rest), asking for the logits of every position.
PromptRun RunChunked(const ModelWeights& w, const std::vector<int32_t>& tokens,
                     const std::vector<int>& chunks);

// Returns the run of `tokens` fed one token per call, asking for the last
// position's logits each time (the decode path).
PromptRun RunOneByOne(const ModelWeights& w, const std::vector<int32_t>& tokens);

// Returns "" when both runs have bit-identical logits at every position,
// else a description of the first difference.
std::string FirstDifference(const PromptRun& a, const PromptRun& b);

}  // namespace samebits::model::testing
