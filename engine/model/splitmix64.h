// One step of splitmix64, shared by the synthetic weight generator and the
// sampler so that both documented streams (model README) use one definition.
#pragma once

#include <cstdint>

namespace samebits::model {

// Returns splitmix64's output for the state `x` (one step: add the golden
// gamma, then the mixing function).
inline uint64_t SplitMix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace samebits::model
