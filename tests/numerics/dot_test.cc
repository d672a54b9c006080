// FastDot (the hardware-FMA build of the C1 dot product) must equal the
// baseline build of `numerics::Dot` bit for bit.
#include "engine/numerics/dot.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/numerics/lanes.h"

namespace samebits::numerics {
namespace {

// A fixed splitmix64 stream (seed written down), so failures reproduce.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Mixes ordinary values with the cases where rounding and signs matter:
// negative zeros, subnormals, large magnitudes (up to 2^36, so that no sum
// overflows). Inputs stay finite: NaN payloads are not part of the
// contract, and libm's fmaf and the FMA instruction propagate them
// differently.
float Value(uint64_t& state) {
  const uint64_t r = Next(state);
  switch (r % 8) {
    case 0: return -0.0f;
    case 1: return std::bit_cast<float>(static_cast<uint32_t>(r >> 40) & 0x807fffffu);
    case 2: return std::bit_cast<float>((static_cast<uint32_t>(r >> 32) & 0x81ffffffu) | 0x50000000u);
    default:
      return static_cast<float>(static_cast<int32_t>(r >> 40) - (1 << 23)) * 0x1p-20f;
  }
}

template <typename W, typename Convert>
void ExpectSameBits(Convert convert) {
  uint64_t state = 20261129;
  for (size_t n : {0, 1, 15, 16, 17, 31, 33, 64, 100, 255, 1031}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<float> x(n);
      std::vector<W> w(n);
      for (size_t i = 0; i < n; ++i) {
        x[i] = Value(state);
        w[i] = convert(Value(state));
      }
      const float expected = Dot(x.data(), w.data(), n);
      const float actual = FastDot(x.data(), w.data(), n);
      ASSERT_EQ(std::bit_cast<uint32_t>(expected), std::bit_cast<uint32_t>(actual))
          << "n=" << n << " rep=" << rep << " variant=" << FastDotVariant();
    }
  }
}

TEST(FastDot, F32EqualsTheBaselineBuildBitForBit) {
  ExpectSameBits<float>([](float f) { return f; });
}
TEST(FastDot, F16EqualsTheBaselineBuildBitForBit) {
  ExpectSameBits<F16>([](float f) { return ToF16(f); });
}
TEST(FastDot, BF16EqualsTheBaselineBuildBitForBit) {
  ExpectSameBits<BF16>([](float f) { return ToBF16(f); });
}

TEST(FastDot, ReportsWhichBuildIsInUse) {
  const std::string variant = FastDotVariant();
  EXPECT_TRUE(variant == "fma" || variant == "baseline") << variant;
  RecordProperty("variant", variant);
}

}  // namespace
}  // namespace samebits::numerics
