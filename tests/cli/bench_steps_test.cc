// `samebits-engine bench`'s steps apart from the timing: the interleaved
// schedule and the identity verdict (its preflight is engine/platform's,
// tested in tests/platform/preflight_test.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/cli/bench_schedule.h"
#include "engine/cli/bench_statistics.h"

namespace samebits::cli {
namespace {

TEST(BenchSchedule, InterleavesAndLimitsTheReference) {
  // Reference first, then two cpu configurations; 3 rounds, reference in 1.
  EXPECT_EQ(InterleavedOrder({true, false, false}, 3, 1),
            (std::vector<size_t>{0, 1, 2, 2, 1, 1, 2}));
  EXPECT_EQ(InterleavedOrder({false, false}, 2, 0), (std::vector<size_t>{0, 1, 1, 0}));
  EXPECT_TRUE(InterleavedOrder({false}, 0, 0).empty());
}

TEST(BenchStatistics, SpreadOfIsMedianMinMax) {
  const Spread odd = SpreadOf({3.0, 1.0, 2.0});
  EXPECT_EQ(odd.median, 2.0);
  EXPECT_EQ(odd.min, 1.0);
  EXPECT_EQ(odd.max, 3.0);
  EXPECT_EQ(SpreadOf({4.0, 1.0, 2.0, 3.0}).median, 2.5);
}

BenchRecord Record(std::vector<std::vector<uint64_t>> decode, std::vector<uint64_t> prefill) {
  BenchRecord r;
  r.decode_hashes = std::move(decode);
  r.prefill_hashes = std::move(prefill);
  return r;
}

TEST(BenchStatistics, IdentityAgreesWhenHashesDo) {
  // The reference decodes fewer steps: compared over the two both ran.
  const IdentityVerdict v =
      JudgeIdentity({Record({{1, 2}}, {9}), Record({{1, 2, 3}, {1, 2, 3}}, {9, 9})});
  EXPECT_TRUE(v.all_identical);
  ASSERT_EQ(v.against_base.size(), 1u);
  EXPECT_EQ(v.against_base[0].decode_steps, 2u);
}

TEST(BenchStatistics, NegativeControlsOneDifferentHashFails) {
  // A run differing from the same configuration's first run.
  IdentityVerdict v = JudgeIdentity({Record({{1, 2}, {1, 7}}, {9, 9})});
  EXPECT_FALSE(v.runs_identical[0]);
  EXPECT_FALSE(v.all_identical);
  // A configuration's decode differing from the base's.
  v = JudgeIdentity({Record({{1, 2}}, {9}), Record({{1, 3}}, {9})});
  EXPECT_TRUE(v.runs_identical[1]);
  EXPECT_FALSE(v.against_base[0].decode_identical);
  EXPECT_TRUE(v.against_base[0].prefill_identical);
  EXPECT_FALSE(v.all_identical);
  // Prefill differing only.
  v = JudgeIdentity({Record({{1}}, {9}), Record({{1}}, {8})});
  EXPECT_FALSE(v.against_base[0].prefill_identical);
  EXPECT_FALSE(v.all_identical);
}

}  // namespace
}  // namespace samebits::cli
