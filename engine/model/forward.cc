// The small shared pieces of forward.h: state construction and the names of
// the kernel paths. Both passes use them, so they live apart from either.
#include "engine/model/forward.h"

namespace samebits::model {

InferenceState MakeState(const ModelConfig& config) {
  InferenceState state;
  state.k_cache.resize(config.layers.size());
  state.v_cache.resize(config.layers.size());
  return state;
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
