// ULP distances and raw dump reading (harness/analysis/ulp.h).
#include "harness/analysis/ulp.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

namespace samebits::harness {
namespace {

float Bits(uint32_t b) {
  return std::bit_cast<float>(b);
}
float Next(float x, int n) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) + n);
}

TEST(UlpDistance, AdjacentFloatsAreOneApart) {
  EXPECT_EQ(UlpDistance(1.0f, 1.0f), 0u);
  EXPECT_EQ(UlpDistance(1.0f, Next(1.0f, 1)), 1u);
  EXPECT_EQ(UlpDistance(Next(1.0f, 5), 1.0f), 5u);
  EXPECT_EQ(UlpDistance(-1.0f, Next(-1.0f, 2)), 2u);
  // Across a power of two the mapping is still continuous.
  EXPECT_EQ(UlpDistance(std::nextafter(2.0f, 0.0f), 2.0f), 1u);
}

TEST(UlpDistance, SignedZerosAndTheSmallestSubnormals) {
  EXPECT_EQ(UlpDistance(0.0f, -0.0f), 0u);
  const float tiny = Bits(1);  // the smallest positive subnormal
  EXPECT_EQ(UlpDistance(tiny, -tiny), 2u);
  EXPECT_EQ(UlpDistance(-0.0f, tiny), 1u);
}

TEST(UlpDistance, InfinityIsOneAfterTheLargestFloat) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(UlpDistance(std::numeric_limits<float>::max(), inf), 1u);
  EXPECT_EQ(UlpDistance(-inf, inf), 2ull * 0x7F800000u);
}

TEST(UlpDistance, NaNs) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float other_nan = Bits(0x7FC00001u);
  EXPECT_EQ(UlpDistance(nan, other_nan), 0u);
  EXPECT_EQ(UlpDistance(nan, 1.0f), kUlpNaNMismatch);
  EXPECT_EQ(UlpDistance(1.0f, nan), kUlpNaNMismatch);
}

TEST(CompareLogitRows, CountsBitDifferencesAndArgmax) {
  const std::vector<float> a = {1.0f, 2.0f, 3.0f, 0.0f, 5.0f};
  std::vector<float> b = a;
  b[1] = Next(b[1], 4);
  b[3] = -0.0f;          // bits differ, distance 0
  b[0] = Next(5.0f, 1);  // becomes the argmax
  const RowComparison c = CompareLogitRows(a, b);
  EXPECT_EQ(c.differing, 3);
  EXPECT_EQ(c.max_ulp, UlpDistance(1.0f, Next(5.0f, 1)));
  EXPECT_FALSE(c.nan_mismatch);
  EXPECT_DOUBLE_EQ(c.max_abs_diff, static_cast<double>(Next(5.0f, 1)) - 1.0);
  EXPECT_EQ(c.argmax_a, 4);
  EXPECT_EQ(c.argmax_b, 0);
  EXPECT_THROW(CompareLogitRows(a, std::vector<float>(4)), std::invalid_argument);
}

// Near zero a few float steps are a huge ULP count but nothing at the
// row's scale: the relative difference is measured against the row's
// largest |logit|, so it stays tiny where the ULP figure alarms.
TEST(CompareLogitRows, RelativeDifferenceIsAgainstTheRowScale) {
  const std::vector<float> a = {1e-30f, -8.0f, 2.0f};
  std::vector<float> b = a;
  b[0] = 2e-30f;  // millions of ULPs apart, 1e-30 apart
  const RowComparison near_zero = CompareLogitRows(a, b);
  EXPECT_GT(near_zero.max_ulp, 1000000u);
  EXPECT_DOUBLE_EQ(near_zero.row_max_abs, 8.0);
  EXPECT_DOUBLE_EQ(near_zero.max_rel_diff,
                   (static_cast<double>(b[0]) - static_cast<double>(a[0])) / 8.0);
  EXPECT_LT(near_zero.max_rel_diff, 1e-30);
  // Negative control: one ULP on the largest logit is a larger relative
  // difference than millions of ULPs near zero.
  b = a;
  b[1] = Next(-8.0f, 1);
  const RowComparison at_scale = CompareLogitRows(a, b);
  EXPECT_EQ(at_scale.max_ulp, 1u);
  EXPECT_GT(at_scale.max_rel_diff, near_zero.max_rel_diff);
  EXPECT_DOUBLE_EQ(at_scale.row_max_abs, std::fabs(static_cast<double>(b[1])));
  // Equal rows: no difference, and a zero row has no scale.
  EXPECT_EQ(CompareLogitRows(a, a).max_rel_diff, 0.0);
  const std::vector<float> zeros(3, 0.0f);
  EXPECT_EQ(CompareLogitRows(zeros, zeros).row_max_abs, 0.0);
}

TEST(CompareLogitRows, NaNOnOneSideIsReportedNotMeasured) {
  const std::vector<float> a = {1.0f, 2.0f};
  const std::vector<float> b = {std::numeric_limits<float>::quiet_NaN(), 2.0f};
  const RowComparison c = CompareLogitRows(a, b);
  EXPECT_EQ(c.differing, 1);
  EXPECT_TRUE(c.nan_mismatch);
  EXPECT_EQ(c.max_ulp, kUlpNaNMismatch);
  EXPECT_EQ(c.max_abs_diff, 0.0);  // only finite pairs count
  EXPECT_EQ(c.argmax_b, 1);        // NaN never wins
}

TEST(ArgMax, TiesGoToTheLowerId) {
  EXPECT_EQ(ArgMax(std::vector<float>{1, 3, 3, 2}), 1);
  EXPECT_EQ(ArgMax(std::vector<float>{}), 0);
}

class DumpFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("samebits_ulp_dump_" + std::to_string(getpid()) + ".f32"))
                .string();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  void Write(const std::vector<unsigned char>& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
  }
  std::string path_;
};

TEST_F(DumpFile, ReadsLittleEndianRows) {
  // 1.0f = 0x3F800000, -2.0f = 0xC0000000, written little-endian.
  Write({0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0, 0, 0, 0x80, 0x3F, 0, 0, 0x80, 0x3F});
  const LogitDump d = ReadLogitDump(path_, 2);
  EXPECT_EQ(d.vocab_size, 2);
  EXPECT_EQ(d.Row(0)[1], -2.0f);
  EXPECT_EQ(d.Row(1)[0], 1.0f);
}

TEST_F(DumpFile, RejectsBadSizesWithClearMessages) {
  const auto message = [&](int64_t rows) {
    try {
      ReadLogitDump(path_, rows);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Write({});
  EXPECT_NE(message(1).find("is empty"), std::string::npos);
  Write({1, 2, 3, 4, 5, 6});
  EXPECT_NE(message(1).find("not a whole number of float32"), std::string::npos);
  Write(std::vector<unsigned char>(12));
  EXPECT_NE(message(2).find("do not divide into 2 rows"), std::string::npos);
  EXPECT_NE(message(0).find("no steps"), std::string::npos);
  EXPECT_NE(message(2).find(path_), std::string::npos);
  std::filesystem::remove(path_);
  EXPECT_NE(message(1).find("cannot be opened"), std::string::npos);
}

}  // namespace
}  // namespace samebits::harness
