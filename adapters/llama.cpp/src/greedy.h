// The greedy choice of PROTOCOL.md's `argmax`: the largest logit, ties to
// the lower id, NaNs never chosen (0 when every logit is NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

namespace samebits::llamacpp {

inline int32_t Greedy(std::span<const float> logits) {
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (best < 0 || logits[i] > logits[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best < 0 ? 0 : best;
}

}  // namespace samebits::llamacpp
