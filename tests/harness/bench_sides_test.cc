// The sides of `samebits bench A B` (harness/runner/bench_sides.h): a
// configuration side is any name samebits-engine's profile's grammar reads,
// parsed, not regenerated from the default matrix and matched.
#include "harness/runner/bench_sides.h"

#include <gtest/gtest.h>

#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

BenchSideOptions Options() {
  BenchSideOptions options;
  options.own_profile = harness::testing::OwnProfile();
  return options;
}

TEST(BenchSides, AnyNameTheProfileReadsIsAConfiguration) {
  // In the default matrix and not: thread counts, chunk sizes and profiles
  // that no matrix template spells.
  for (const char* name : {"reference", "cpu-t2", "cpu-t5-chunk16k-libm", "cpu-t64-avx2-int8",
                           "cpu-t3-b8-staggered", "cpu-t7-b5-seed9"}) {
    EXPECT_TRUE(NamesConfigurationSide(name, Options())) << name;
  }
}

TEST(BenchSides, NamesTheGrammarRefusesAreNoConfiguration) {
  // Revisions, a thread count out of range, a default spelt out, axes out
  // of order.
  for (const char* name : {"HEAD~3", "main", "cpu-t0", "cpu-t1025", "cpu-t2-b1", "cpu-libm-t2"}) {
    EXPECT_FALSE(NamesConfigurationSide(name, Options())) << name;
  }
}

}  // namespace
}  // namespace samebits::runner
