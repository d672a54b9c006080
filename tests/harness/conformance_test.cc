// Conformance measurements (harness/analysis/conformance.h), against values
// worked out by hand on small rows.
#include "harness/analysis/conformance.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace samebits::harness {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

float NextUp(float x, int n) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) + static_cast<uint32_t>(n));
}

StepConformance Measure(const std::vector<float>& a, const std::vector<float>& b,
                        double max_nmse = 1e-4) {
  return MeasureStep(0, a, b, ConformanceThreshold{max_nmse});
}

TEST(ConformanceNmse, IsSquaredErrorOverSquaredReference) {
  // sum (a - b)^2 = 1; sum a^2 = 1 + 4 + 9 + 16 = 30.
  const StepConformance s = Measure({1, 2, 3, 4}, {1, 2, 3, 5});
  EXPECT_DOUBLE_EQ(s.nmse, 1.0 / 30.0);
  EXPECT_DOUBLE_EQ(s.max_abs_diff, 1.0);
  EXPECT_TRUE(s.deviates);
  // The denominator is side A's: swapping the sides gives 1 / (1 + 4 + 9 + 25).
  EXPECT_DOUBLE_EQ(Measure({1, 2, 3, 5}, {1, 2, 3, 4}).nmse, 1.0 / 39.0);
}

TEST(ConformanceNmse, EqualRowsAndZeroRows) {
  const StepConformance same = Measure({0.5f, -2, 7}, {0.5f, -2, 7});
  EXPECT_EQ(same.nmse, 0.0);
  EXPECT_EQ(same.kl_divergence, 0.0);
  EXPECT_EQ(same.ulp.max, 0u);
  EXPECT_FALSE(same.deviates);
  EXPECT_EQ(Measure({0, 0}, {0, 0}).nmse, 0.0);
  // A zero reference against anything else: the error has no scale.
  EXPECT_EQ(Measure({0, 0}, {0, 1}).nmse, std::numeric_limits<double>::infinity());
}

TEST(ConformanceNmse, ThresholdIsInclusive) {
  // a = (1, 0), b = (1 - 0.5, 0): 0.25 / 1.
  EXPECT_FALSE(Measure({1, 0}, {0.5f, 0}, 0.25).deviates);
  const StepConformance over = Measure({1, 0}, {0.5f, 0}, 0.2);
  EXPECT_TRUE(over.deviates);
  EXPECT_EQ(over.why, "NMSE 2.50e-01 > 2.00e-01");
}

TEST(ConformanceKl, TwoTokensByHand) {
  // A: logits (0, ln 3) -> P = (1/4, 3/4); B: (0, 0) -> Q = (1/2, 1/2).
  // KL(P || Q) = 1/4 ln(1/2) + 3/4 ln(3/2).
  const float ln3 = static_cast<float>(std::log(3.0));
  const double p1 = std::exp(double{ln3}) / (1 + std::exp(double{ln3}));  // 3/4 at float's ln 3
  const double expected = (1 - p1) * std::log((1 - p1) / 0.5) + p1 * std::log(p1 / 0.5);
  const StepConformance s = Measure({0, ln3}, {0, 0});
  EXPECT_NEAR(s.kl_divergence, expected, 1e-15);
  EXPECT_NEAR(s.kl_divergence, 0.25 * std::log(0.5) + 0.75 * std::log(1.5), 1e-7);
}

TEST(ConformanceKl, StableForLargeLogitsAndBlindToAShift) {
  // The same rows shifted by 1000 would overflow a naive exp in float and
  // double alike; the KL divergence does not change.
  const float ln3 = static_cast<float>(std::log(3.0));
  const double small = Measure({0, ln3}, {0, 0}).kl_divergence;
  const StepConformance big = Measure({1000, 1000 + ln3}, {1000, 1000});
  EXPECT_NEAR(big.kl_divergence, small, 1e-4);  // 1000 + ln 3 rounds in float
  // A constant shift leaves the softmax unchanged: KL 0, while NMSE sees it.
  const StepConformance shifted = Measure({1, 2, 3}, {2, 3, 4});
  EXPECT_NEAR(shifted.kl_divergence, 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(shifted.nmse, 3.0 / 14.0);
}

TEST(ConformanceKl, MinusInfinityIsProbabilityZero) {
  // A masked logit on both sides: (0, -inf) is P = (1, 0) on both.
  const StepConformance masked = Measure({0, -kInf}, {0, -kInf});
  EXPECT_EQ(masked.kl_divergence, 0.0);
  EXPECT_EQ(masked.nonfinite_mismatches, 0);
  EXPECT_FALSE(masked.deviates);
  // B masks a token A gives probability 1/2: infinitely divergent.
  const StepConformance b_masks = Measure({0, 0}, {0, -kInf});
  EXPECT_EQ(b_masks.kl_divergence, std::numeric_limits<double>::infinity());
  EXPECT_EQ(b_masks.nonfinite_mismatches, 1);
  EXPECT_TRUE(b_masks.deviates);
}

TEST(ConformanceKl, UndefinedWithNaNOrPlusInfinity) {
  EXPECT_TRUE(std::isnan(Measure({0, kNaN}, {0, kNaN}).kl_divergence));
  EXPECT_TRUE(std::isnan(Measure({0, kInf}, {0, kInf}).kl_divergence));
  EXPECT_TRUE(std::isnan(Measure({-kInf, -kInf}, {-kInf, -kInf}).kl_divergence));
}

TEST(ConformanceTop1, TiesGoToTheLowerIndex) {
  // A's maximum 5 is at 0 and 1 -> 0; B's at 1 and 2 -> 1.
  const StepConformance s = Measure({5, 5, 1}, {1, 5, 5});
  EXPECT_EQ(s.top1_a, 0);
  EXPECT_EQ(s.top1_b, 1);
  EXPECT_FALSE(s.top1_agrees);
  // A tie on both sides at the same indices agrees.
  const StepConformance tie = Measure({2, 7, 7}, {2, 7, 7});
  EXPECT_EQ(tie.top1_a, 1);
  EXPECT_TRUE(tie.top1_agrees);
  // NaN is never chosen.
  EXPECT_EQ(Measure({kNaN, 1, 3}, {kNaN, 1, 3}).top1_a, 2);
}

TEST(ConformanceTop5, OverlapOfTheFiveLargest) {
  // A ascending: its top five are 3..7; B descending: 0..4. Common: 3, 4.
  const StepConformance s = Measure({0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_EQ(s.top_count, 5);
  EXPECT_EQ(s.top_overlap, 2);
  EXPECT_FALSE(s.top1_agrees);
  // Ties at the fifth place go to the lower index: A's top five of
  // (9, 8, 7, 6, 1, 1, 1) are 0..4, B's of (9, 8, 7, 6, 0, 1, 1) are 0..3 and 5.
  const StepConformance tie = Measure({9, 8, 7, 6, 1, 1, 1}, {9, 8, 7, 6, 0, 1, 1});
  EXPECT_EQ(tie.top_overlap, 4);
  // A row shorter than five counts all of it.
  const StepConformance short_row = Measure({1, 2, 3}, {3, 2, 1});
  EXPECT_EQ(short_row.top_count, 3);
  EXPECT_EQ(short_row.top_overlap, 3);
}

TEST(ConformanceUlp, PercentilesByNearestRank) {
  // Distances (0, 0, 1, 3): p50 is rank ceil(2) = 2 -> 0; p99 rank 4 -> 3.
  const StepConformance s = Measure({1, 2, 4, 8}, {1, 2, NextUp(4, 1), NextUp(8, 3)});
  EXPECT_EQ(s.ulp.p50, 0u);
  EXPECT_EQ(s.ulp.p99, 3u);
  EXPECT_EQ(s.ulp.max, 3u);
  std::vector<double> values = {5, 1, 4, 2, 3};
  EXPECT_EQ(NearestRankPercentile(values, 50), 3.0);   // rank ceil(2.5) = 3
  EXPECT_EQ(NearestRankPercentile(values, 100), 5.0);  // rank 5
  EXPECT_EQ(NearestRankPercentile(values, 1), 1.0);    // rank ceil(0.05) = 1
  std::vector<double> none;
  EXPECT_EQ(NearestRankPercentile(none, 99), 0.0);
}

TEST(ConformanceNonFinite, OneSidedNaNDeviatesWhateverTheThreshold) {
  const StepConformance s = Measure({1, kNaN, 3}, {1, 2, 3}, /*max_nmse=*/1e9);
  EXPECT_EQ(s.nonfinite_mismatches, 1);
  EXPECT_TRUE(s.deviates);
  EXPECT_EQ(s.why, "1 of 3 values non-finite on one side only");
  // Not the 0 of the elements finite in both, which would read as agreement
  // beside the verdict: not defined, and max |a - b| infinite.
  EXPECT_TRUE(std::isnan(s.nmse));
  EXPECT_TRUE(std::isinf(s.max_abs_diff));
  // +inf against -inf is a mismatch too; the same infinity is not.
  EXPECT_EQ(Measure({kInf, 1}, {-kInf, 1}).nonfinite_mismatches, 1);
  EXPECT_EQ(Measure({kInf, 1}, {kInf, 1}).nonfinite_mismatches, 0);
}

TEST(ConformanceStep, RefusesRowsOfDifferentLengths) {
  EXPECT_THROW(Measure({1, 2}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(Measure({}, {}), std::invalid_argument);
}

TEST(ConformanceMeter, SummaryAndFirstDeviatingStep) {
  ConformanceMeter meter(ConformanceThreshold{1e-4});
  // Step 0 equal; step 1 NMSE 1e-6 (a = (1000, 0), b = (999, 0)); step 2
  // NMSE 1/30; step 3 equal again.
  meter.AddStep(0, std::vector<float>{1, 2, 3, 4}, std::vector<float>{1, 2, 3, 4});
  meter.AddStep(1, std::vector<float>{1000, 0}, std::vector<float>{999, 0});
  meter.AddStep(2, std::vector<float>{1, 2, 3, 4}, std::vector<float>{1, 2, 3, 5});
  meter.AddStep(3, std::vector<float>{4, 3}, std::vector<float>{4, 3});
  const ConformanceSummary sum = meter.Summary();
  EXPECT_EQ(sum.steps, 4);
  EXPECT_DOUBLE_EQ(meter.Steps()[1].nmse, 1e-6);
  EXPECT_FALSE(meter.Steps()[1].deviates);
  EXPECT_DOUBLE_EQ(sum.max_nmse, 1.0 / 30.0);
  EXPECT_DOUBLE_EQ(sum.mean_nmse, (1e-6 + 1.0 / 30.0) / 4);
  ASSERT_TRUE(sum.first_deviating_step.has_value());
  EXPECT_EQ(*sum.first_deviating_step, 2);
  EXPECT_FALSE(sum.Conforms());
  EXPECT_STREQ(ConformanceVerdictName(sum), "DEVIATES");
  EXPECT_EQ(sum.top1_agreements, 4);
  EXPECT_DOUBLE_EQ(sum.max_abs_diff, 1.0);
  EXPECT_EQ(sum.kld_steps, 4);
  // Step 1's softmax is (1, 0) on both sides (exp(-1000) underflows in
  // double), so step 2's is the only KL divergence above 0.
  EXPECT_EQ(meter.Steps()[1].kl_divergence, 0.0);
  EXPECT_GT(sum.kld_max, 0.0);
  EXPECT_EQ(sum.kld_max, meter.Steps()[2].kl_divergence);
  EXPECT_DOUBLE_EQ(sum.kld_mean, sum.kld_max / 4);
  // p99 of four values by nearest rank is the largest.
  EXPECT_EQ(sum.kld_p99, sum.kld_max);
}

TEST(ConformanceMeter, ConformsWithinTheThresholdAndNotWithoutSteps) {
  ConformanceMeter meter(ConformanceThreshold{});
  EXPECT_STREQ(ConformanceVerdictName(meter.Summary()), "NOT COMPARED");
  meter.AddStep(0, std::vector<float>{1000, 0}, std::vector<float>{999, 0});
  const ConformanceSummary sum = meter.Summary();
  EXPECT_TRUE(sum.Conforms());
  EXPECT_STREQ(ConformanceVerdictName(sum), "CONFORMS");
  // Over every element: distances (16384, 0), floats in [512, 1024) being
  // 2^-14 apart.
  EXPECT_EQ(sum.ulp.p50, 0u);
  EXPECT_EQ(sum.ulp.max, 16384u);
}

// Rows with no element finite in both (all NaN, all +inf) deviate, and no
// number says otherwise: NMSE, max |a - b| and the KL divergence are not
// defined, step by step and in the summary (issue 43: they printed 0 beside
// DEVIATES).
TEST(ConformanceNonFinite, NoFinitePairLeavesEveryNumberUndefined) {
  for (const float v : {kNaN, kInf, -kInf}) {
    const std::vector<float> row(4, v);
    const StepConformance s = Measure(row, row);
    EXPECT_TRUE(std::isnan(s.nmse)) << v;
    EXPECT_TRUE(std::isnan(s.max_abs_diff)) << v;
    EXPECT_TRUE(s.deviates) << v;
    ConformanceMeter meter(ConformanceThreshold{1e-4});
    meter.AddStep(0, row, row);
    meter.AddStep(1, std::vector<float>{1, 2, 3, 4}, std::vector<float>{1, 2, 3, 4});
    const ConformanceSummary sum = meter.Summary();
    EXPECT_FALSE(sum.Conforms()) << v;
    EXPECT_TRUE(std::isnan(sum.max_nmse)) << v;
    EXPECT_TRUE(std::isnan(sum.mean_nmse)) << v;
    EXPECT_TRUE(std::isnan(sum.max_abs_diff)) << v;
  }
  ConformanceMeter nan_only(ConformanceThreshold{1e-4});
  nan_only.AddStep(0, std::vector<float>{kNaN, kNaN}, std::vector<float>{kNaN, kNaN});
  const ConformanceSummary sum = nan_only.Summary();
  EXPECT_EQ(sum.kld_steps, 0);
  EXPECT_TRUE(std::isnan(sum.kld_mean));
  EXPECT_TRUE(std::isnan(sum.kld_max));
}

}  // namespace
}  // namespace samebits::harness
