// The bench's statistics on fixed inputs (harness/analysis/bench_statistics.h),
// and the summary of interleaved samples (harness/runner/ab_bench.h). The
// expected values are worked out by hand in the comments.
#include "harness/analysis/bench_statistics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "harness/analysis/bench_summary.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

TEST(BenchStatistics, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({7}), 7);
  EXPECT_THROW(Median({}), std::invalid_argument);
}

TEST(BenchStatistics, StudentTQuantiles) {
  EXPECT_EQ(StudentT975(1), 12.706);
  EXPECT_EQ(StudentT975(9), 2.262);
  EXPECT_EQ(StudentT975(30), 2.042);
  EXPECT_EQ(StudentT975(35), 2.042);  // rounded toward the wider interval
  EXPECT_EQ(StudentT975(1000), 1.980);
  EXPECT_THROW(StudentT975(0), std::invalid_argument);
}

TEST(BenchStatistics, EqualRatiosGiveAPointInterval) {
  // Every B is 10% slower: ln(1.1) each, sd 0, so the interval is [1.1, 1.1].
  const PairedRatio r = PairedRatioOf({{100, 110}, {200, 220}, {50, 55}});
  EXPECT_EQ(r.pairs, 3);
  EXPECT_NEAR(r.ratio, 1.1, 1e-12);
  ASSERT_TRUE(r.low && r.high);
  EXPECT_NEAR(*r.low, 1.1, 1e-12);
  EXPECT_NEAR(*r.high, 1.1, 1e-12);
}

TEST(BenchStatistics, TIntervalOverPairedLogRatios) {
  // Ratios 0.5, 1, 2: log-ratios -ln2, 0, ln2; mean 0 (ratio 1); sd ln2;
  // half width t(2) * ln2 / sqrt(3) = 4.303 * 0.693147 / 1.732051 = 1.722012;
  // the interval is [exp(-1.722012), exp(1.722012)] = [0.178706, 5.595776].
  const PairedRatio r = PairedRatioOf({{10, 5}, {10, 10}, {10, 20}});
  EXPECT_NEAR(r.ratio, 1.0, 1e-12);
  ASSERT_TRUE(r.low && r.high);
  EXPECT_NEAR(*r.low, 0.178706, 1e-6);
  EXPECT_NEAR(*r.high, 5.595776, 1e-6);
  // A negative control: a different spread gives a different interval.
  const PairedRatio narrow = PairedRatioOf({{10, 9}, {10, 10}, {10, 11}});
  EXPECT_GT(*narrow.low, *r.low);
}

TEST(BenchStatistics, OnePairHasNoInterval) {
  const PairedRatio r = PairedRatioOf({{10, 5}});
  EXPECT_NEAR(r.ratio, 0.5, 1e-12);
  EXPECT_FALSE(r.low.has_value());
  EXPECT_THROW(PairedRatioOf({{0, 5}}), std::invalid_argument);
}

harness::BenchSample Sample(char side, int round, double ms, uint64_t seed) {
  harness::BenchSample s;
  s.side = side;
  s.round = round;
  s.ok = true;
  s.elapsed_ms = ms;
  s.wall_ms = ms + 1;
  for (int i = 0; i < 3; ++i) s.outputs.push_back(testing::MakeStep(i, seed));
  s.steps = 3;
  return s;
}

TEST(BenchSummary, PairsNeighboursWithinABBARoundsAndDropsWarmups) {
  // Warm-ups (round -1) are slow and must not count. Round 0: A 10, B 5,
  // B 5, A 10; round 1: A 20, B 10, B 10, A 20: every pair is B/A = 0.5.
  const std::vector<harness::BenchSample> samples = {
      Sample('A', -1, 1000, 1), Sample('B', -1, 1000, 1), Sample('A', 0, 10, 1),
      Sample('B', 0, 5, 1),     Sample('B', 0, 5, 1),     Sample('A', 0, 10, 1),
      Sample('A', 1, 20, 1),    Sample('B', 1, 10, 1),    Sample('B', 1, 10, 1),
      Sample('A', 1, 20, 1)};
  const harness::BenchSummary s = harness::SummarizeBench(samples);
  EXPECT_EQ(s.ratio.pairs, 4);
  EXPECT_NEAR(s.ratio.ratio, 0.5, 1e-12);
  EXPECT_EQ(s.median_a_ms, 15);
  EXPECT_EQ(s.median_b_ms, 7.5);
  EXPECT_TRUE(s.identical);
  EXPECT_TRUE(s.a_repeatable && s.b_repeatable);
}

TEST(BenchSummary, ABThatChangesABitIsNotIdenticalEvenWhenFaster) {
  std::vector<harness::BenchSample> samples = {Sample('A', 0, 10, 1), Sample('B', 0, 5, 1),
                                               Sample('B', 0, 5, 1), Sample('A', 0, 10, 1)};
  for (harness::BenchSample& s : samples) {
    if (s.side == 'B') s.outputs[2].xxh3_64 ^= 1;  // one bit of one hash
  }
  const harness::BenchSummary s = harness::SummarizeBench(samples);
  EXPECT_FALSE(s.identical);
  EXPECT_NE(s.identity_detail.find("B changes the bits"), std::string::npos) << s.identity_detail;
  EXPECT_NE(s.identity_detail.find("step 2"), std::string::npos) << s.identity_detail;
}

TEST(BenchSummary, ASideThatDiffersFromItselfIsNotRepeatable) {
  std::vector<harness::BenchSample> samples = {Sample('A', 0, 10, 1), Sample('B', 0, 5, 1),
                                               Sample('B', 0, 5, 1), Sample('A', 0, 10, 2)};
  const harness::BenchSummary s = harness::SummarizeBench(samples);
  EXPECT_FALSE(s.a_repeatable);
  EXPECT_TRUE(s.b_repeatable);
}

// Per-token phase times: A's prefill 1 ms/token and decode 2 ms/token in
// every run; B's prefill half as long, its decode the same. So the prefill
// ratio is 0.5 and the decode ratio 1, whatever the whole runs' ratio.
harness::BenchSample PhasedSample(char side, int round) {
  harness::BenchSample s = Sample(side, round, 20, 1);
  protocol::PhaseTimes p;
  p.prefill_tokens = 12;
  p.prefill_ms = side == 'A' ? 12 : 6;
  p.decode_tokens = 4;
  p.decode_ms = 8;
  s.phases = p;
  return s;
}

TEST(BenchSummary, PrefillAndDecodeArePairedPerToken) {
  std::vector<harness::BenchSample> samples;
  for (int round = 0; round < 2; ++round) {
    for (char side : {'A', 'B', 'B', 'A'}) samples.push_back(PhasedSample(side, round));
  }
  const harness::BenchSummary s = harness::SummarizeBench(samples);
  ASSERT_TRUE(s.prefill.known);
  ASSERT_TRUE(s.decode.known);
  EXPECT_EQ(s.prefill.tokens, 12);
  EXPECT_EQ(s.decode.tokens, 4);
  EXPECT_EQ(s.prefill.median_a_ms_per_token, 1);
  EXPECT_EQ(s.prefill.median_b_ms_per_token, 0.5);
  EXPECT_EQ(s.decode.median_a_ms_per_token, 2);
  EXPECT_EQ(s.decode.median_b_ms_per_token, 2);
  EXPECT_EQ(s.prefill.ratio.pairs, 4);
  EXPECT_NEAR(s.prefill.ratio.ratio, 0.5, 1e-12);
  EXPECT_NEAR(s.decode.ratio.ratio, 1.0, 1e-12);
  ASSERT_TRUE(s.decode.ratio.low.has_value());
}

// One run without the split (an older engine) makes the split unknown
// rather than a summary of the runs that had it.
TEST(BenchSummary, ARunWithoutTheSplitMakesItUnknown) {
  std::vector<harness::BenchSample> samples;
  for (char side : {'A', 'B', 'B', 'A'}) samples.push_back(PhasedSample(side, 0));
  samples[2].phases.reset();
  const harness::BenchSummary s = harness::SummarizeBench(samples);
  EXPECT_FALSE(s.prefill.known);
  EXPECT_FALSE(s.decode.known);
  EXPECT_EQ(s.ratio.pairs, 2);  // the whole runs are summarized as before
}

}  // namespace
}  // namespace samebits::harness
