// Test data and the bit-comparison harness shared by the kernel tests (and
// by the negative controls, which prove the harness can fail).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/kernels/kernels.h"

namespace samebits::kernels::testing {

// splitmix64 (Steele, Lea and Flood 2014): a small seeded generator whose
// output is fixed by its seed on every platform. Tests never use
// std::random_device.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  // Returns the next 64 random bits.
  uint64_t Next();
  // Returns a value in [0, n).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// What kind of values a test vector holds.
enum class Mode {
  kUnit,     // uniform in [-1, 1)
  kMixed,    // +0, -0, f32 subnormals, large (2^40..2^50, 2^10..2^15 for F16) and
             // ordinary magnitudes 2^-30..2^10, both signs
  kTiny,     // magnitudes so small that many products underflow to +-0 or
             // subnormals
  kNegZero,  // negative activations below 2^-135 and positive weights in
             // [2^-24, 2^-16): every product underflows to -0.0, so every
             // lane and the dot are -0.0 unless a tail touches other lanes
};
const char* ModeName(Mode mode);
inline constexpr Mode kAllModes[] = {Mode::kUnit, Mode::kMixed, Mode::kTiny, Mode::kNegZero};
inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16};

// Returns `n` values in [-amp, amp) from a fixed linear congruential
// sequence started at `seed` (the attention and softmax tests' data).
std::vector<float> LcgValues(size_t n, uint32_t seed, float amp);

// Returns `n` activations drawn from `seed`.
std::vector<float> MakeActivations(size_t n, Mode mode, uint64_t seed);
// Returns `n` weights of `dtype` as raw little-endian bytes, drawn from
// `seed` and rounded to the type (so F16 never overflows to infinity).
std::vector<uint8_t> MakeWeights(DType dtype, size_t n, Mode mode, uint64_t seed);

// Returns dot(x, W[row, :], k) by `numerics::Dot`, the contract's reference.
float ReferenceDot(const float* x, const void* w, DType dtype, int64_t k, int64_t row);

// Returns the bits of `f`.
uint32_t Bits(float f);

using GemvFn = void (*)(const float* x, const void* w, DType dtype, int64_t k, int64_t row_begin,
                        int64_t row_end, float* y);

// One GEMV check: a (rows, k) matrix, the range [row_begin, row_end), and x
// and W placed `misalign` elements past an aligned address.
struct GemvCase {
  DType dtype = DType::kF32;
  int64_t k = 0;
  int64_t rows = 0;
  int64_t row_begin = 0;
  int64_t row_end = 0;
  int misalign = 0;
  Mode mode = Mode::kUnit;
  uint64_t seed = 0;
};
std::string Describe(const GemvCase& c);

// Runs `fn` on the case and compares every output with `ReferenceDot` by
// memcmp; also checks canary floats before and after y. Returns "" on a
// bit-exact match, else a message naming the first difference.
std::string CheckGemv(GemvFn fn, const GemvCase& c);

// A buffer of `bytes` whose last byte is immediately followed by a page
// mapped PROT_NONE, so a read past the end faults.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  // Returns the start of the data, or nullptr when mapping failed.
  uint8_t* data() const { return data_; }

 private:
  uint8_t* base_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// The canary written around outputs: a NaN with a recognisable payload, which
// no kernel can produce from the finite test data.
inline constexpr uint32_t kCanaryBits = 0x7fa5a5a5u;
inline constexpr int kGuardFloats = 8;

}  // namespace samebits::kernels::testing
