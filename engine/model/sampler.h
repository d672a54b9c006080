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

// Sampling, in this order (sampler.cc carries the same list beside the code):
//  1. candidates: the non-NaN logits sorted by descending logit, ties to the
//     lower token id;
//  2. top_k > 0 keeps the first top_k candidates;
//  3. p = softmax(logit / temperature) over them per C4 (max, exp from the
//     MathLibrary, C1 sum), in rank order;
//  4. top_p < 1 cuts after the first rank where the sequential running sum
//     of p reaches top_p; T is the running sum at the cut (or over all);
//  5. u = (splitmix64(splitmix64(seed ^ salt) + step_index) >> 40) * 2^-24,
//     an exact float in [0, 1); the token is the first candidate whose
//     sequential running sum exceeds u * T (the last kept one otherwise).
// Throws std::invalid_argument for temperature <= 0 or infinite, top_p
// outside (0, 1], or top_k < 0.
// Returns the token for step `step_index` of a run. Greedy ignores the step;
// sampling draws a uniform from splitmix64(seed, step_index), so the choice
// depends only on the logits, the configuration and the step.
int32_t SampleToken(const SamplerConfig& config, std::span<const float> logits, uint64_t step_index,
                    const numerics::MathLibrary& math);

}  // namespace samebits::model
