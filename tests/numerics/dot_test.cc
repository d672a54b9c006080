// FastDot (the hardware-FMA build of the C1 dot product) must equal the
// baseline build of `numerics::Dot` bit for bit.
#include "engine/numerics/dot.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/numerics/lanes.h"
#include "engine/numerics/splitmix.h"

namespace samebits::numerics {
namespace {

// Mixes ordinary values with the cases where rounding and signs matter:
// negative zeros, subnormals, large magnitudes (up to 2^36, so that no sum
// overflows). Inputs stay finite: NaN payloads are not part of the
// contract, and libm's fmaf and the FMA instruction propagate them
// differently. The stream's seed is written down, so failures reproduce.
float Value(SplitMix64Stream& rng) {
  const uint64_t r = rng.Next();
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
  SplitMix64Stream rng(20261129);
  for (size_t n : {0, 1, 15, 16, 17, 31, 33, 64, 100, 255, 1031}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<float> x(n);
      std::vector<W> w(n);
      for (size_t i = 0; i < n; ++i) {
        x[i] = Value(rng);
        w[i] = convert(Value(rng));
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
