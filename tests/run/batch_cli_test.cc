// `samebits-engine run --batch` end to end: the real program gives the step
// hashes and trace records of --batch 1 whatever the batch, seed and
// schedule; the records carry the batch options and each row's place;
// staggered really moves the scenario's sequence; and the negative control
// (SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE=1) changes batched runs only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <set>
#include <string>
#include <vector>

#include "engine/protocol/records.h"
#include "tests/support/engine_process.h"

namespace samebits {
namespace {

// Runs `run` on synthetic:medium (MoE) with the classic scenario and
// `extra` arguments, with the negative control when `break_batches`;
// expects success.
protocol::Transcript RunMedium(const std::string& extra, bool break_batches = false) {
  // The child inherits this process's environment.
  unsetenv("SAMEBITS_TEST_ONLY_BREAK_IDENTITY");
  if (break_batches) {
    setenv("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE", "1", 1);
  } else {
    unsetenv("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE");
  }
  const std::string args = "run --checkpoint synthetic:medium --scenario '" +
                           std::string(SAMEBITS_SOURCE_DIR) +
                           "/scenarios/classic.json' --threads 2 --trace " + extra;
  const testing::EngineResult r = testing::RunEngine(args, "");
  unsetenv("SAMEBITS_TEST_ONLY_BREAK_BATCH_INVARIANCE");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  const protocol::Transcript t = protocol::ReadTranscript(r.out);
  EXPECT_TRUE(t.ok) << args << "\n" << r.err;
  return t;
}

// Returns "" when both transcripts have the same step hashes and tokens and
// the same trace records, else the first difference.
std::string FirstDifference(const protocol::Transcript& a, const protocol::Transcript& b) {
  if (a.steps.size() != b.steps.size()) return "different step counts";
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const protocol::Step &x = a.steps[i], &y = b.steps[i];
    if (x.fnv1a64 != y.fnv1a64 || x.xxh3_64 != y.xxh3_64 || x.token != y.token ||
        x.position != y.position) {
      return "step " + std::to_string(i) + " differs";
    }
  }
  if (a.traces != b.traces) return "trace records differ";
  return "";
}

TEST(BatchCliTest, BatchedRunsGiveTheHashesOfBatchOne) {
  const protocol::Transcript alone = RunMedium("");
  ASSERT_FALSE(alone.steps.empty());
  ASSERT_FALSE(alone.traces.empty());
  EXPECT_EQ(alone.hello->config.batch, 1);
  for (const protocol::Step& s : alone.steps) EXPECT_FALSE(s.batch.has_value());
  EXPECT_EQ(FirstDifference(alone, RunMedium("--batch 1")), "");

  for (const std::string schedule : {"together", "staggered"}) {
    const protocol::Transcript batched =
        RunMedium("--batch 4 --batch-seed 9 --batch-schedule " + schedule);
    EXPECT_EQ(FirstDifference(alone, batched), "") << schedule;
    ASSERT_TRUE(batched.hello.has_value());
    EXPECT_EQ(batched.hello->config.batch, 4);
    EXPECT_EQ(batched.hello->config.batch_seed, 9u);
    EXPECT_EQ(batched.hello->config.batch_schedule, schedule);
    std::set<int> slots;
    for (const protocol::Step& s : batched.steps) {
      ASSERT_TRUE(s.batch.has_value()) << schedule;
      slots.insert(s.batch->slot);
    }
    if (schedule == "staggered") {
      EXPECT_GT(slots.size(), 1u);
    }
  }
}

TEST(BatchCliTest, TheNegativeControlBreaksBatchedRunsOnly) {
  const protocol::Transcript alone = RunMedium("");
  EXPECT_EQ(FirstDifference(alone, RunMedium("", true)), "");
  EXPECT_NE(FirstDifference(alone, RunMedium("--batch 4", true)), "");
  EXPECT_NE(FirstDifference(alone, RunMedium("--batch 2 --batch-schedule staggered", true)), "");
}

}  // namespace
}  // namespace samebits
