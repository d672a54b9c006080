// The statistics of `samebits conform` over the steps of a pair
// (harness/analysis/conformance.h, sample_statistics.h) against a fixture
// worked out by hand, and the stability of a step (stable, fragile,
// unstable) case by case.
//
// These are floating statistics across engines, not identity, so the
// expected values are compared with a stated tolerance. The fixture's
// logits are ln w for small weights w, so that every softmax is the
// weights over their sum, exactly, in rationals; the literals below are
// those exact values (rounded to 10 digits). The rows hold ln w rounded to
// float, at most 2^-22 / 2 = 1.2e-7 from ln w for w <= 8, which moves every
// log-probability by at most 2.4e-7 and so every probability, Δp, KL
// divergence and NMSE below by less than 1e-6: the tolerance `kTol`
// (`kTolPercent` = 100 kTol for figures in percent).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "harness/analysis/conformance.h"
#include "harness/analysis/sample_statistics.h"

namespace samebits::harness {
namespace {

constexpr double kTol = 1e-6;
constexpr double kTolPercent = 100 * kTol;
constexpr float kFloatNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kDoubleInf = std::numeric_limits<double>::infinity();

// Returns the logits ln w, in float.
std::vector<float> Ln(const std::vector<double>& weights) {
  std::vector<float> row;
  row.reserve(weights.size());
  for (const double w : weights) row.push_back(static_cast<float>(std::log(w)));
  return row;
}

// The fixture: three steps of four logits, threshold 1 (every step
// conforms; the NMSE test below uses a tighter one). A's top-1 is token 0
// at every step, its top-2 token 1.
//
// Step 0, stable.
//   A = ln(8, 4, 2, 2): P = (1/2, 1/4, 1/8, 1/8).
//   B = ln(7, 4, 2, 3): Q = (7/16, 4/16, 2/16, 3/16). B's top-1 is 0.
//   Δp = 7/16 - 1/2 = -1/16 = -0.0625.
//   KL = 1/2 ln(8/7) + 1/4 ln 1 + 1/8 ln 1 + 1/8 ln(2/3)
//      = 0.5 * 0.1335313926 - 0.125 * 0.4054651081 = 0.0160825578.
//   margin = ln 8 - ln 4 = ln 2 = 0.6931471806;
//   |Δ| at tokens 0 and 1 = ln(8/7) + 0 = 0.1335313926 < margin: stable.
//   NMSE = (ln(8/7)^2 + ln(2/3)^2) / ((9 + 4 + 1 + 1) (ln 2)^2)
//        = (0.0178306 + 0.1644020) / 7.2067960 = 0.02528621689.
//   max |a - b| is ln(3/2) = 0.4054651081, at token 3.
// Step 1, fragile.
//   A = ln(3, 2, 1, 1): P = (3/7, 2/7, 1/7, 1/7).
//   B = ln(4, 2.5, 1, 1): Q = (8/17, 5/17, 2/17, 2/17). B's top-1 is 0.
//   Δp = 8/17 - 3/7 = 5/119 = 0.04201680672.
//   KL = 3/7 ln(51/56) + 2/7 ln(34/35) + 2/7 ln(17/14) = 0.0071083973.
//   margin = ln(3/2) = 0.4054651081;
//   |Δ| = ln(4/3) + ln(2.5/2) = 0.2876820725 + 0.2231435513
//       = 0.5108256238 >= margin: fragile (both moved up, B's margin grew,
//       but differences of that size pointing against each other would
//       flip the token).
//   NMSE = (ln(4/3)^2 + ln(5/4)^2) / (ln 3^2 + ln 2^2) = 0.07855509315.
// Step 2, unstable.
//   A = ln(4, 3, 2, 1): P = (0.4, 0.3, 0.2, 0.1).
//   B = ln(3, 4, 2, 1): Q = (0.3, 0.4, 0.2, 0.1). B's top-1 is 1.
//   Δp = 0.3 - 0.4 = -0.1.
//   KL = 0.4 ln(4/3) + 0.3 ln(3/4) = 0.1 ln(4/3) = 0.02876820725.
//   margin = ln(4/3) = 0.2876820725; |Δ| = 2 ln(4/3) = 0.5753641449.
//   NMSE = 2 ln(4/3)^2 / (ln 4^2 + ln 3^2 + ln 2^2) = 0.04586094042.
ConformanceMeter Fixture(double max_nmse = 1.0) {
  ConformanceMeter meter(ConformanceThreshold{max_nmse});
  meter.AddStep(0, Ln({8, 4, 2, 2}), Ln({7, 4, 2, 3}));
  meter.AddStep(1, Ln({3, 2, 1, 1}), Ln({4, 2.5, 1, 1}));
  meter.AddStep(2, Ln({4, 3, 2, 1}), Ln({3, 4, 2, 1}));
  return meter;
}

TEST(ConformanceStatistics, EachStepByHand) {
  const ConformanceMeter meter = Fixture();
  const std::vector<StepConformance>& s = meter.Steps();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0].p_a_top1, 0.5, kTol);
  EXPECT_NEAR(s[0].p_b_top1, 0.4375, kTol);
  EXPECT_NEAR(s[0].delta_p, -0.0625, kTol);
  EXPECT_NEAR(s[1].delta_p, 0.04201680672, kTol);
  EXPECT_NEAR(s[2].delta_p, -0.1, kTol);
  EXPECT_NEAR(s[0].kl_divergence, 0.0160825578, kTol);
  EXPECT_NEAR(s[1].kl_divergence, 0.0071083973, kTol);
  EXPECT_NEAR(s[2].kl_divergence, 0.02876820725, kTol);
  EXPECT_NEAR(s[0].nmse, 0.02528621689, kTol);
  EXPECT_NEAR(s[1].nmse, 0.07855509315, kTol);
  EXPECT_NEAR(s[2].nmse, 0.04586094042, kTol);
  EXPECT_NEAR(s[0].margin, 0.6931471806, kTol);
  EXPECT_NEAR(s[1].margin, 0.4054651081, kTol);
  EXPECT_NEAR(s[2].margin, 0.2876820725, kTol);
  EXPECT_NEAR(s[0].top_disagreement, 0.1335313926, kTol);
  EXPECT_NEAR(s[1].top_disagreement, 0.5108256238, kTol);
  EXPECT_NEAR(s[2].top_disagreement, 0.5753641449, kTol);
  for (const StepConformance& step : s) {
    EXPECT_EQ(step.top1_a, 0);
    EXPECT_EQ(step.top2_a, 1);
  }
  EXPECT_EQ(s[0].stability, Stability::kStable);
  EXPECT_EQ(s[1].stability, Stability::kFragile);
  EXPECT_EQ(s[2].stability, Stability::kUnstable);
  EXPECT_EQ(s[0].worst_token, 3);  // |ln 2 - ln 3|, the largest of step 0
}

TEST(ConformanceStatistics, SummaryByHand) {
  const ConformanceSummary sum = Fixture().Summary();
  // KLD (0.0160825578, 0.0071083973, 0.0287682072): mean 0.0173197208;
  // deviations (-0.0012372, -0.0102113, 0.0114485), their squares summing to
  // 2.3687e-4, / (n - 1) = 1.18437e-4, / n = 3.9479e-5, sqrt: 0.0062831725.
  // Median: the middle value; p99 (rank ceil(2.97) = 3) and p99.9 (rank
  // ceil(2.997) = 3) the largest.
  EXPECT_EQ(sum.kld_steps, 3);
  EXPECT_NEAR(sum.kld_mean, 0.01731972078, kTol);
  EXPECT_NEAR(sum.kld_mean_se, 0.006283172524, kTol);
  EXPECT_NEAR(sum.kld_median, 0.0160825578, kTol);
  EXPECT_NEAR(sum.kld_p99, 0.02876820725, kTol);
  EXPECT_NEAR(sum.kld_p999, 0.02876820725, kTol);
  EXPECT_NEAR(sum.kld_max, 0.02876820725, kTol);
  // Δp (-1/16, 5/119, -1/10): mean -0.1204831933 / 3 = -0.04016106443;
  // deviations (-0.0223389, 0.0821779, -0.0598389), squares summing to
  // 0.0108326, / 2 / 3, sqrt: 0.04249103584.
  EXPECT_EQ(sum.delta_p_steps, 3);
  EXPECT_NEAR(sum.delta_p_mean.value, -0.04016106443, kTol);
  EXPECT_NEAR(sum.delta_p_mean.se, 0.04249103584, kTol);
  // RMS Δp: squares (0.00390625, 0.00176541, 0.01), mean 0.00522389,
  // sqrt 0.0722764647. se of the mean of the squares: deviations
  // (-0.00131764, -0.00345848, 0.00477611), squares summing to 3.6511e-5,
  // / 2 / 3 = 6.0852e-6, sqrt 0.00246673; / (2 RMS) = 0.01706452893.
  EXPECT_NEAR(sum.delta_p_rms.value, 0.0722764647, kTol);
  EXPECT_NEAR(sum.delta_p_rms.se, 0.01706452893, kTol);
  // Same top-1 at steps 0 and 1: p = 2/3, 66.66666667 %; binomial error
  // 100 sqrt((2/3)(1/3)/3) = 100 sqrt(2/27) = 27.2165527 %.
  EXPECT_EQ(sum.top1_agreements, 2);
  EXPECT_NEAR(sum.top1_percent.value, 66.66666667, kTolPercent);
  EXPECT_NEAR(sum.top1_percent.se, 27.2165527, kTolPercent);
  // NMSE (0.02528621689, 0.07855509315, 0.04586094042): mean
  // 0.04990075015, se 0.01550949539 (as for the KLD above).
  EXPECT_NEAR(sum.mean_nmse, 0.04990075015, kTol);
  EXPECT_NEAR(sum.mean_nmse_se, 0.01550949539, kTol);
  EXPECT_NEAR(sum.max_nmse, 0.07855509315, kTol);
  // Four logits: every step's top five are all four, on both sides.
  EXPECT_EQ(sum.top_overlap_mean, 4.0);
  EXPECT_EQ(sum.top_overlap_mean_se, 0.0);
  // One fragile step and one unstable: the pair is unstable.
  EXPECT_EQ(sum.fragile_steps, 1);
  EXPECT_EQ(sum.unstable_steps, 1);
  EXPECT_EQ(sum.stability, Stability::kUnstable);
  EXPECT_TRUE(sum.Conforms());
  EXPECT_EQ(ConformanceVerdictLine(sum),
            "CONFORMS (unstable: the argmax moved at 1 of 3 steps, 1 more within their margin)");
}

TEST(ConformanceStatistics, DeviatesNamesStepTokenAndMetric) {
  // NMSE 0.0253 at step 0 exceeds 0.01; its largest |a - b| is at token 3,
  // ln 2 (A) against ln 3 (B).
  const ConformanceSummary sum = Fixture(/*max_nmse=*/0.01).Summary();
  ASSERT_TRUE(sum.first_deviating_step.has_value());
  EXPECT_EQ(*sum.first_deviating_step, 0);
  EXPECT_EQ(sum.first_deviating_token, 3);
  EXPECT_EQ(ConformanceVerdictLine(sum),
            "DEVIATES at step 0, token 3 (A 0.693147, B 1.09861): NMSE 2.53e-02 > 1.00e-02 "
            "(unstable: the argmax moved at 1 of 3 steps, 1 more within their margin)");
}

TEST(ConformanceStatistics, DeviatesAtANonFiniteElement) {
  ConformanceMeter meter(ConformanceThreshold{1e-4});
  meter.AddStep(0, std::vector<float>{1, 2, 3}, std::vector<float>{1, 2, 3});
  // B's NaN with its sign bit set, as x86 makes them: still "nan".
  meter.AddStep(1, std::vector<float>{1, 2, 3, 4}, std::vector<float>{1, -kFloatNaN, 3, 9});
  const ConformanceSummary sum = meter.Summary();
  EXPECT_EQ(sum.first_deviating_token, 1);  // the non-finite one, not 3 with |Δ| 5
  // Both argmaxes are token 3, but |4 - 9| at A's top-1 is beyond A's
  // margin 4 - 3: fragile.
  EXPECT_EQ(ConformanceVerdictLine(sum),
            "DEVIATES at step 1, token 1 (A 2, B nan): 1 of 4 values non-finite on one side only "
            "(fragile: 1 of 2 steps within their margin)");
}

TEST(ConformanceStatistics, ConformingVerdictLines) {
  ConformanceMeter stable(ConformanceThreshold{1});
  stable.AddStep(0, std::vector<float>{2, 1, 0, 0}, std::vector<float>{2.25f, 1, 0, 0});
  EXPECT_EQ(ConformanceVerdictLine(stable.Summary()), "CONFORMS (stable)");
  stable.AddStep(1, std::vector<float>{2, 1, 0, 0}, std::vector<float>{2.5f, 0.5f, 0, 0});
  const ConformanceSummary fragile = stable.Summary();
  EXPECT_EQ(fragile.stability, Stability::kFragile);
  EXPECT_EQ(ConformanceVerdictLine(fragile),
            "CONFORMS (fragile: 1 of 2 steps within their margin)");
  EXPECT_EQ(ConformanceVerdictLine(ConformanceMeter(ConformanceThreshold{}).Summary()),
            "NOT COMPARED");
}

// Stability of single steps (exact binary fractions: no rounding at all).
StepConformance Step(const std::vector<float>& a, const std::vector<float>& b) {
  return MeasureStep(0, a, b, ConformanceThreshold{1e9});
}

TEST(ConformanceStability, MarginAgainstTheDisagreementAtTheTopTwo) {
  // Margin 2 - 1 = 1 throughout.
  const StepConformance stable = Step({2, 1, 0, 0}, {2.25f, 1.5f, 0, 0});
  EXPECT_EQ(stable.margin, 1.0);
  EXPECT_EQ(stable.top_disagreement, 0.75);  // 0.25 + 0.5 < 1
  EXPECT_EQ(stable.stability, Stability::kStable);
  // Exactly the margin counts: 0.5 + 0.5 = 1 (B ties, its argmax by the
  // tie rule is still 0).
  const StepConformance at_margin = Step({2, 1, 0, 0}, {1.5f, 1.5f, 0, 0});
  EXPECT_TRUE(at_margin.top1_agrees);
  EXPECT_EQ(at_margin.stability, Stability::kFragile);
  // A shift of the whole row leaves the softmax (and the KL divergence) as
  // it is, but the disagreement 0.75 + 0.75 is beyond the margin.
  const StepConformance shifted = Step({2, 1, 0, 0}, {2.75f, 1.75f, 0.75f, 0.75f});
  EXPECT_NEAR(shifted.kl_divergence, 0.0, 1e-15);
  EXPECT_EQ(shifted.stability, Stability::kFragile);
  // Far away from the top two, a difference does not count.
  EXPECT_EQ(Step({2, 1, 0, 0}, {2, 1, 0.75f, -5}).stability, Stability::kStable);
  // The argmax moved: unstable, whatever the margin.
  const StepConformance moved = Step({2, 1, 0, 0}, {1, 2, 0, 0});
  EXPECT_EQ(moved.stability, Stability::kUnstable);
  // To a third token too.
  EXPECT_EQ(Step({2, 1, 0, 0}, {2, 1, 3, 0}).stability, Stability::kUnstable);
}

TEST(ConformanceStability, TiesSingleValuesAndNaN) {
  // A tie in A is fragile even against identical rows: the tie rule chose.
  const StepConformance tie = Step({3, 3, 0}, {3, 3, 0});
  EXPECT_EQ(tie.margin, 0.0);
  EXPECT_EQ(tie.stability, Stability::kFragile);
  // One value: no second token to flip to.
  const StepConformance one = Step({1}, {1.5f});
  EXPECT_EQ(one.top2_a, -1);
  EXPECT_EQ(one.margin, kDoubleInf);
  EXPECT_EQ(one.stability, Stability::kStable);
  // B has no number at A's top-2: the step cannot be shown stable.
  const StepConformance nan = Step({2, 1, 0}, {2, kFloatNaN, 0});
  EXPECT_TRUE(std::isnan(nan.top_disagreement));
  EXPECT_EQ(nan.stability, Stability::kFragile);
  // The same infinity on both sides is no disagreement.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Step({inf, 1, 0}, {inf, 1, 0}).stability, Stability::kStable);
}

TEST(SampleStatistics, StandardErrorsAndTheirEdges) {
  // (1, 2, 3, 4): mean 2.5, deviations squared 2.25 + 0.25 + 0.25 + 2.25 = 5,
  // sample variance 5 / 3, se sqrt(5 / 3 / 4) = 0.6454972244.
  const std::vector<double> four = {1, 2, 3, 4};
  EXPECT_NEAR(MeanWithError(four).value, 2.5, 1e-15);
  EXPECT_NEAR(MeanWithError(four).se, 0.6454972244, 1e-10);
  // One value has a mean but no spread to estimate; none has neither.
  const std::vector<double> one = {7};
  EXPECT_EQ(MeanWithError(one).value, 7.0);
  EXPECT_TRUE(std::isnan(MeanWithError(one).se));
  EXPECT_TRUE(std::isnan(MeanWithError({}).value));
  // An infinite value leaves the mean infinite and the error undefined.
  const std::vector<double> inf = {1, kDoubleInf};
  EXPECT_EQ(MeanWithError(inf).value, kDoubleInf);
  EXPECT_TRUE(std::isnan(MeanWithError(inf).se));
  // RMS of zeros: 0 ± 0, not 0 / 0.
  const std::vector<double> zeros = {0, 0, 0};
  EXPECT_EQ(RootMeanSquareWithError(zeros).value, 0.0);
  EXPECT_EQ(RootMeanSquareWithError(zeros).se, 0.0);
  // Binomial: 1 of 4 is 25 % ± 100 sqrt(0.25 * 0.75 / 4) = 21.65063509 %.
  EXPECT_EQ(PercentWithError(1, 4).value, 25.0);
  EXPECT_NEAR(PercentWithError(1, 4).se, 21.65063509, 1e-8);
  EXPECT_EQ(PercentWithError(3, 3).se, 0.0);
  EXPECT_TRUE(std::isnan(PercentWithError(0, 0).value));
}

}  // namespace
}  // namespace samebits::harness
