// Choosing the next token from logits (contract clause C10): greedy, or
// seeded temperature / top-k / top-p sampling with a counter-based random
// generator, so a sampled run reproduces exactly on every platform.
#pragma once

#include <cstdint>
#include <span>

#include "engine/numerics/math.h"

namespace samebits::model {

struct SamplerConfig {
  enum class Kind : uint8_t { kGreedy, kSample } kind = Kind::kGreedy;
  float temperature = 1.0f;  // > 0
  int top_k = 0;             // 0: all tokens
  float top_p = 1.0f;        // in (0, 1]
  uint64_t seed = 0;
};

// Returns the index of the largest logit, ties to the lower index; NaNs are
// never chosen (all-NaN logits give 0).
int32_t Argmax(std::span<const float> logits);

// Returns the token for step `step_index` of a run. Greedy ignores the step;
// sampling draws a uniform from splitmix64(seed, step_index), so the choice
// depends only on the logits, the configuration and the step.
int32_t SampleToken(const SamplerConfig& config, std::span<const float> logits,
                    uint64_t step_index, const numerics::MathLibrary& math);

}  // namespace samebits::model
