// Token choice per clause C10. The sampling algorithm, step by step:
//
//  1. Candidates are the non-NaN logits, sorted by descending logit, ties to
//     the lower token id (a total order, so every sort agrees).
//  2. With top_k > 0, only the first top_k candidates are kept.
//  3. s_j = logit_j / temperature; p = softmax(s) per C4 over the kept
//     candidates in rank order (max, exp from the MathLibrary, C1 sum).
//  4. With top_p < 1, the candidates are cut after the first rank at which
//     the running sum c = c + p_j (sequential, in rank order) reaches top_p.
//     The total T is that running sum at the cut (the plain sequential sum
//     of all kept p when top_p = 1).
//  5. A uniform u in [0, 1) with 24 random bits:
//        bits = splitmix64(splitmix64(seed ^ kSamplerSalt) + step_index)
//        u    = (float)(bits >> 40) * 2^-24          (exact)
//     r = u * T; the token is the first candidate whose running sum
//     (sequential, in rank order, as in step 4) exceeds r; the last kept
//     candidate if rounding leaves none.
#include "engine/model/sampler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/cpu_ops.h"
#include "engine/numerics/splitmix.h"

namespace samebits::model {
namespace {

// Separates the sampler's stream from other users of the same seed.
constexpr uint64_t kSamplerSalt = 0x73616d706c657221ULL;  // "sampler!"

}  // namespace

int32_t Argmax(std::span<const float> logits) {
  int32_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    // Strictly greater: ties keep the lower index.
    if (best < 0 || logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best < 0 ? 0 : best;
}

int32_t SampleToken(const SamplerConfig& config, std::span<const float> logits, uint64_t step_index,
                    const numerics::MathLibrary& math) {
  if (config.kind == SamplerConfig::Kind::kGreedy) return Argmax(logits);
  if (!(config.temperature > 0.0f) || std::isinf(config.temperature)) {
    throw std::invalid_argument("sampler temperature is " + std::to_string(config.temperature) +
                                "; it must be positive and finite (use greedy for temperature 0)");
  }
  if (!(config.top_p > 0.0f && config.top_p <= 1.0f)) {
    throw std::invalid_argument("sampler top_p is " + std::to_string(config.top_p) +
                                "; it must be in (0, 1]");
  }
  if (config.top_k < 0) {
    throw std::invalid_argument("sampler top_k is " + std::to_string(config.top_k) +
                                "; use 0 for all tokens or a positive count");
  }

  // 1. Candidates in rank order.
  std::vector<int32_t> ids;
  ids.reserve(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!std::isnan(logits[i])) ids.push_back(static_cast<int32_t>(i));
  }
  if (ids.empty()) return 0;
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  // 2. Top-k.
  if (config.top_k > 0 && static_cast<size_t>(config.top_k) < ids.size()) ids.resize(config.top_k);
  // 3. Softmax of the tempered logits.
  const int n = static_cast<int>(ids.size());
  std::vector<float> p(n);
  for (int j = 0; j < n; ++j) p[j] = logits[ids[j]] / config.temperature;
  // p[0] is the maximum (rank order), so -inf there means every candidate is -inf.
  if (std::isinf(p[0]) && p[0] < 0) return ids[0];
  cpu::SoftmaxInPlace(p.data(), n, math);
  // 4. Top-p cut.
  int kept = n;
  float total = 0.0f;
  for (int j = 0; j < n; ++j) {
    total = total + p[j];
    if (config.top_p < 1.0f && total >= config.top_p) {
      kept = j + 1;
      break;
    }
  }
  // 5. The draw.
  const uint64_t bits =
      numerics::SplitMix64(numerics::SplitMix64(config.seed ^ kSamplerSalt) + step_index);
  const float u = static_cast<float>(bits >> 40) * 0x1p-24f;
  const float r = u * total;
  float running = 0.0f;
  for (int j = 0; j < kept; ++j) {
    running = running + p[j];
    if (r < running) return ids[j];
  }
  return ids[kept - 1];
}

}  // namespace samebits::model
