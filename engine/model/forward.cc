// The small shared pieces of forward.h: state construction, the input
// checks of Run and the names of the kernel paths. Both passes use them, so
// they live apart from either.
#include "engine/model/forward.h"

#include <stdexcept>

#include "engine/platform/prefault.h"

namespace samebits::model {

InferenceState MakeState(const ModelConfig& config) {
  InferenceState state;
  state.k_cache.resize(config.layers.size());
  state.v_cache.resize(config.layers.size());
  return state;
}

void ReserveCachePositions(const ModelConfig& config, InferenceState& state, int64_t positions) {
  const size_t need = static_cast<size_t>(positions) * config.n_kv_heads * config.head_dim;
  for (auto* caches : {&state.k_cache, &state.v_cache}) {
    for (std::vector<float>& cache : *caches) {
      if (cache.capacity() >= need) continue;
      cache.reserve(need);
      platform::PrefaultForWrite(cache.data() + cache.size(),
                                 (cache.capacity() - cache.size()) * sizeof(float));
    }
  }
}

void CheckRunInputs(const ModelWeights& weights, const InferenceState& state,
                    std::span<const int32_t> tokens) {
  const ModelConfig& c = weights.config;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) {
      throw std::invalid_argument("token id " + std::to_string(tokens[i]) + " at index " +
                                  std::to_string(i) + " is outside the vocabulary [0, " +
                                  std::to_string(c.vocab_size) + ") of " + c.name);
    }
  }
  if (state.n_past < 0 || state.n_past + static_cast<int64_t>(tokens.size()) > c.max_seq_len) {
    throw std::invalid_argument("context of " + std::to_string(state.n_past) + " + " +
                                std::to_string(tokens.size()) + " tokens exceeds max_seq_len " +
                                std::to_string(c.max_seq_len) + " of " + c.name);
  }
  // n_past >= 0 here, so the cache sizes are n_past whole rows.
  const size_t kv_row = static_cast<size_t>(c.n_kv_heads) * c.head_dim;
  const size_t n_layers = weights.layers.size();
  bool fits = state.k_cache.size() == n_layers && state.v_cache.size() == n_layers;
  for (size_t l = 0; fits && l < state.k_cache.size(); ++l) {
    fits = state.k_cache[l].size() == static_cast<size_t>(state.n_past) * kv_row &&
           state.v_cache[l].size() == static_cast<size_t>(state.n_past) * kv_row;
  }
  if (!fits) {
    throw std::invalid_argument("the inference state does not belong to " + c.name +
                                " (cache shape differs); make it with MakeState");
  }
}

void CheckBatchInputs(const ModelWeights& weights, std::span<const SequenceCall> calls) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const std::string where = "batch call " + std::to_string(i) + ": ";
    if (calls[i].state == nullptr || calls[i].logits == nullptr) {
      throw std::invalid_argument(where + "needs a state and a logits vector");
    }
    try {
      CheckRunInputs(weights, *calls[i].state, calls[i].tokens);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(where + e.what());
    }
    for (size_t j = 0; j < i; ++j) {
      if (calls[j].state == calls[i].state) {
        throw std::invalid_argument(where + "feeds the same state as call " + std::to_string(j) +
                                    " (one sequence may appear once per batch)");
      }
    }
  }
}

const char* KernelPathName(KernelPath path) {
  switch (path) {
    case KernelPath::kReference:
      return "reference";
    case KernelPath::kCpu:
      return "cpu";
  }
  return "?";
}

bool ParseKernelPath(const std::string& name, KernelPath* out) {
  if (name == "reference")
    *out = KernelPath::kReference;
  else if (name == "cpu")
    *out = KernelPath::kCpu;
  else
    return false;
  return true;
}

}  // namespace samebits::model
