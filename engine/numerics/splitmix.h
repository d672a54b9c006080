// splitmix64 (Steele, Lea and Flood, 2014): the one seeded generator of the
// project. Its definition is fixed and published, so a stream is the same on
// every platform and can be recomputed by any other implementation; pinned
// hashes of generated data (synthetic weights, sampled tokens, random
// prompts, math fingerprint inputs) depend on these exact bits.
#pragma once

#include <cstdint>

namespace samebits::numerics {

// The increment of the splitmix64 state (the golden-ratio "gamma").
inline constexpr uint64_t kSplitMix64Gamma = 0x9e3779b97f4a7c15ULL;

// Returns splitmix64's output for the state `x`: one step (add the gamma),
// then the mixing function.
constexpr uint64_t SplitMix64(uint64_t x) {
  uint64_t z = x + kSplitMix64Gamma;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Returns output `i` (counting from 0) of the stream seeded with `seed`.
// Counter based: it does not depend on how many outputs were drawn before.
constexpr uint64_t SplitMix64At(uint64_t seed, uint64_t i) {
  return SplitMix64(seed + i * kSplitMix64Gamma);
}

// A sequential splitmix64 stream: Next() returns outputs 0, 1, 2, ... of the
// stream seeded with `seed`.
class SplitMix64Stream {
 public:
  explicit constexpr SplitMix64Stream(uint64_t seed) : state_(seed) {}

  // Returns the next output and advances the stream.
  constexpr uint64_t Next() {
    const uint64_t out = SplitMix64(state_);
    state_ += kSplitMix64Gamma;
    return out;
  }

 private:
  uint64_t state_;
};

// splitmix64 seeded with 0: its first output is the published value.
static_assert(SplitMix64Stream(0).Next() == 0xe220a8397b1dcdafULL);

}  // namespace samebits::numerics
