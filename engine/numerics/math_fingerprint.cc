#include "engine/numerics/math_fingerprint.h"

#include <bit>

#include "engine/numerics/hash.h"
#include "engine/numerics/splitmix.h"

namespace samebits::numerics {
namespace {

constexpr uint64_t kFingerprintSeed = 0x5a3eb175c0ffee01ull;
constexpr int kPerRange = 256;

// Draws from splitmix64 (splitmix.h), whose fixed published definition makes
// the input set identical everywhere.
struct InputRng {
  SplitMix64Stream stream;
  uint64_t Next() { return stream.Next(); }
  // Returns a float uniform in [lo, hi) on a grid of 2^24 steps; the
  // arithmetic is exact-or-IEEE-rounded, hence portable.
  float Uniform(float lo, float hi) {
    const float unit = static_cast<float>(Next() >> 40) * 0x1p-24f;
    return lo + (hi - lo) * unit;
  }
  // Returns a float with random bits below `limit_bits` (a positive float).
  float Bits(uint32_t limit_bits) {
    return std::bit_cast<float>(static_cast<uint32_t>(Next() % limit_bits));
  }
};

float FromBits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

FingerprintInputs MakeInputs() {
  InputRng rng{SplitMix64Stream(kFingerprintSeed)};
  FingerprintInputs in;
  const float inf = FromBits(0x7f800000u);
  const float nan = FromBits(0x7fc00000u);
  const float specials[] = {
      0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, nan, FromBits(1u), FromBits(0x7f7fffffu)};
  for (float s : specials) {
    in.exp.push_back(s);
    in.log.push_back(s);
    in.sin_cos.push_back(s);
    in.tanh.push_back(s);
  }
  for (int i = 0; i < kPerRange; ++i) {
    in.exp.push_back(rng.Uniform(-1.0f, 1.0f));
    in.exp.push_back(rng.Uniform(-20.0f, 0.0f));     // softmax
    in.exp.push_back(rng.Uniform(-104.0f, -87.0f));  // subnormal results
    in.exp.push_back(rng.Uniform(80.0f, 89.0f));     // near overflow
    in.log.push_back(rng.Uniform(0.5f, 2.0f));       // near 1
    in.log.push_back(rng.Bits(0x00800000u));         // subnormals
    in.log.push_back(rng.Bits(0x7f800000u));         // any positive float
    in.log.push_back(rng.Uniform(1.0f, 100000.0f));  // RoPE bases
    in.sin_cos.push_back(rng.Uniform(-4.0f, 4.0f));
    in.sin_cos.push_back(rng.Uniform(-100000.0f, 100000.0f));  // RoPE angles
    in.sin_cos.push_back(rng.Bits(0x4e800000u));               // |x| < 2^30
    in.sin_cos.push_back(-rng.Bits(0x7f800000u));              // any finite magnitude
    in.tanh.push_back(rng.Uniform(-10.0f, 10.0f));
    in.tanh.push_back(rng.Uniform(-0.6f, 0.6f));
    in.tanh.push_back(rng.Bits(0x3c000000u));  // tiny
    in.pow_x.push_back(rng.Uniform(0.0f, 100.0f));
    in.pow_y.push_back(rng.Uniform(-8.0f, 8.0f));
    in.pow_x.push_back(rng.Uniform(0.5f, 2.0f));
    in.pow_y.push_back(rng.Uniform(-40.0f, 40.0f));
  }
  return in;
}

void Append(std::vector<float>* out, float v) {
  out->push_back(v != v ? FromBits(0x7fc00000u) : v);
}

}  // namespace

const FingerprintInputs& GetFingerprintInputs() {
  static const FingerprintInputs inputs = MakeInputs();
  return inputs;
}

uint64_t MathFingerprint(const FingerprintFunctions& f) {
  const FingerprintInputs& in = GetFingerprintInputs();
  std::vector<float> results;
  for (float x : in.exp) Append(&results, f.exp(x));
  for (float x : in.log) Append(&results, f.log(x));
  for (float x : in.sin_cos) Append(&results, f.sin(x));
  for (float x : in.sin_cos) Append(&results, f.cos(x));
  for (float x : in.tanh) Append(&results, f.tanh(x));
  for (size_t i = 0; i < in.pow_x.size(); ++i) Append(&results, f.pow(in.pow_x[i], in.pow_y[i]));
  return HashFloatsXxh3(results);
}

}  // namespace samebits::numerics
