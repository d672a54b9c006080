// Clause C1: the 16-virtual-lane order of `Dot`, `Sum` and `ReduceLanes`.
// The cases use B = 2^24, where floats are 2 apart, so adding 1 to B is a
// tie that rounds back to B: a naive left-to-right sum loses every 1 while
// the lane order keeps them. Every expected value is worked out by hand in
// the comment above it, following engine/numerics/README.md step by step.
#include "engine/numerics/lanes.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "tests/numerics/float_bits.h"

namespace samebits::numerics {
namespace {

constexpr float kB = 16777216.0f;  // 2^24

using test_support::Bits;

// Returns the naive left-to-right sum, to show that it differs.
float SequentialSum(const std::vector<float>& x) {
  float s = 0.0f;
  for (float v : x) s = s + v;
  return s;
}

// Returns x = [B, 1 x 15] followed by `tail`.
std::vector<float> BThenOnes(std::vector<float> tail) {
  std::vector<float> x(16, 1.0f);
  x[0] = kB;
  x.insert(x.end(), tail.begin(), tail.end());
  return x;
}

TEST(Lanes, EmptyIsPositiveZero) {
  EXPECT_EQ(Bits(Sum(nullptr, 0)), 0u);
  EXPECT_EQ(Bits(Dot<float>(nullptr, nullptr, 0)), 0u);
}

TEST(Lanes, OneElementIsTheProduct) {
  const float x[] = {3.0f};
  const float w[] = {-5.0f};
  EXPECT_EQ(Bits(Dot(x, w, 1)), Bits(-15.0f));
  EXPECT_EQ(Bits(Sum(x, 1)), Bits(3.0f));
}

TEST(Lanes, FifteenElements) {
  // x = [B, 1 x 14]: acc = [B, 1 x 14, 0].
  // s8 = [B+1 -> B (tie to even), 2 x 6, acc[7]+acc[15] = 1]
  // s4 = [B+2, 4, 4, 2+1 = 3]; s2 = [B+2+4 = B+6, 4+3 = 7];
  // dot = B+13, a tie between B+12 (even mantissa) and B+14 -> B+12.
  std::vector<float> x(15, 1.0f);
  x[0] = kB;
  const std::vector<float> ones(x.size(), 1.0f);
  EXPECT_EQ(Bits(Sum(x.data(), x.size())), Bits(16777228.0f));
  EXPECT_EQ(Bits(Dot(x.data(), ones.data(), x.size())), Bits(16777228.0f));
  EXPECT_EQ(Bits(SequentialSum(x)), Bits(kB));  // every +1 rounds away
}

TEST(Lanes, SixteenElements) {
  // acc = [B, 1 x 15]; s8 = [B+1 -> B, 2 x 7]; s4 = [B+2, 4, 4, 4];
  // s2 = [B+6, 8]; dot = B+14 = 16777230.
  const std::vector<float> x = BThenOnes({});
  const std::vector<float> ones(x.size(), 1.0f);
  EXPECT_EQ(Bits(Sum(x.data(), x.size())), Bits(16777230.0f));
  EXPECT_EQ(Bits(Dot(x.data(), ones.data(), x.size())), Bits(16777230.0f));
  EXPECT_EQ(Bits(SequentialSum(x)), Bits(kB));
}

TEST(Lanes, SeventeenElements) {
  // x[16] = 2 goes to lane 0: acc = [B+2, 1 x 15].
  // s8[0] = B+2+1 = B+3, a tie between B+2 (odd mantissa) and B+4 -> B+4;
  // s4[0] = B+4+2 = B+6; s2[0] = B+6+4 = B+10; dot = B+10+8 = B+18.
  // Sequentially: B, +1 x 15 -> B, +2 -> B+2.
  const std::vector<float> x = BThenOnes({2.0f});
  const std::vector<float> ones(x.size(), 1.0f);
  EXPECT_EQ(Bits(Sum(x.data(), x.size())), Bits(16777234.0f));
  EXPECT_EQ(Bits(Dot(x.data(), ones.data(), x.size())), Bits(16777234.0f));
  EXPECT_EQ(Bits(SequentialSum(x)), Bits(16777218.0f));
}

TEST(Lanes, ThirtyThreeElements) {
  // x = [B, 1 x 15, 2, 1 x 15, 4]: lane 0 = B+2+4 = B+6, lanes 1..15 = 2.
  // s8 = [B+8, 4 x 7]; s4 = [B+12, 8, 8, 8]; s2 = [B+20, 16]; dot = B+36.
  // Sequentially: B (ones lost), +2 -> B+2, +1 -> B+3 -> B+4 (tie to
  // even), further ones lost, +4 -> B+8.
  std::vector<float> tail(16, 1.0f);
  tail[0] = 2.0f;
  tail.push_back(4.0f);
  const std::vector<float> x = BThenOnes(tail);
  ASSERT_EQ(x.size(), 33u);
  const std::vector<float> ones(x.size(), 1.0f);
  EXPECT_EQ(Bits(Sum(x.data(), x.size())), Bits(16777252.0f));
  EXPECT_EQ(Bits(Dot(x.data(), ones.data(), x.size())), Bits(16777252.0f));
  EXPECT_EQ(Bits(SequentialSum(x)), Bits(16777224.0f));
}

TEST(Lanes, DotUsesFusedMultiplyAdd) {
  // Lane 0 gets fma(1, -1, 0) = -1, then fma(a, a, -1) with a = 1 + 2^-12:
  // a*a = 1 + 2^-11 + 2^-24 exactly, so the fused result is 2^-11 + 2^-24.
  // A separate multiply would round a*a to 1 + 2^-11 first and give 2^-11.
  std::vector<float> x(17, 0.0f), w(17, 0.0f);
  const float a = 1.0f + 0x1p-12f;
  x[0] = 1.0f;
  w[0] = -1.0f;
  x[16] = a;
  w[16] = a;
  EXPECT_EQ(Bits(Dot(x.data(), w.data(), x.size())), Bits(0x1p-11f + 0x1p-24f));
}

TEST(Lanes, NegativeZero) {
  // Lanes start at +0 and +0 + -0 = +0, so a sum of negative zeros is +0.
  const std::vector<float> neg_zeros(17, -0.0f);
  EXPECT_EQ(Bits(Sum(neg_zeros.data(), 1)), 0u);
  EXPECT_EQ(Bits(Sum(neg_zeros.data(), 17)), 0u);
  // fma(-0, 1, +0) = -0 + +0 = +0 as well.
  const std::vector<float> ones(17, 1.0f);
  EXPECT_EQ(Bits(Dot(neg_zeros.data(), ones.data(), 17)), 0u);
  // The tree itself keeps -0 when every lane is -0 (-0 + -0 = -0); this is
  // why a tail must not reset untouched lanes with fma(0, 0, acc).
  float acc[kLanes];
  for (float& a : acc) a = -0.0f;
  EXPECT_EQ(Bits(ReduceLanes(acc)), 0x80000000u);
  acc[5] = 0.0f;
  EXPECT_EQ(Bits(ReduceLanes(acc)), 0u);
}

TEST(Lanes, ReduceLanesTree) {
  // acc[0] = B, acc[4] = acc[8] = 1, the rest 0: s8[0] = B+1 -> B (tie to
  // even), s8[4] = 1; s4[0] = B+1 -> B; s2[0] = B; dot = B. Each 1 meets B
  // alone and is lost.
  float acc[kLanes] = {};
  acc[0] = kB;
  acc[8] = 1.0f;
  acc[4] = 1.0f;
  EXPECT_EQ(Bits(ReduceLanes(acc)), Bits(kB));
  // Add acc[1] = acc[9] = 1: they pair first (s8[1] = 2), travel as
  // s4[1] = 2 and s2[1] = 2, and meet B+0 only at the last step:
  // dot = B+2. Adding the lanes in index order would lose all four ones
  // (B+1 -> B each time) and give B.
  acc[1] = 1.0f;
  acc[9] = 1.0f;
  EXPECT_EQ(Bits(ReduceLanes(acc)), Bits(kB + 2.0f));
  float sequential = 0.0f;
  for (float a : acc) sequential = sequential + a;
  EXPECT_EQ(Bits(sequential), Bits(kB));
}

TEST(Lanes, HalfWeightsConvertExactly) {
  // BF16 and F16 weights give the bits of the same dot product with the
  // weights converted to float first (the conversion is exact).
  const std::vector<float> x = BThenOnes({2.0f});
  std::vector<BF16> wb(x.size(), BF16{0x3f80});  // 1.0
  std::vector<F16> wh(x.size(), F16{0x3c00});    // 1.0
  EXPECT_EQ(Bits(Dot(x.data(), wb.data(), x.size())), Bits(16777234.0f));
  EXPECT_EQ(Bits(Dot(x.data(), wh.data(), x.size())), Bits(16777234.0f));
  // Subnormal half weights: F16 0x0001 is 2^-24, BF16 0x0001 is 2^-133.
  const float one[] = {1.0f};
  const F16 tiny_h[] = {F16{0x0001}};
  const BF16 tiny_b[] = {BF16{0x0001}};
  EXPECT_EQ(Bits(Dot(one, tiny_h, 1)), Bits(0x1p-24f));
  EXPECT_EQ(Bits(Dot(one, tiny_b, 1)), Bits(0x1p-133f));
  // A negative F16 weight with a fractional value: 0xbe00 = -1.5.
  const float two[] = {2.0f};
  const F16 neg[] = {F16{0xbe00}};
  EXPECT_EQ(Bits(Dot(two, neg, 1)), Bits(-3.0f));
}

}  // namespace
}  // namespace samebits::numerics
