// Batched configuration names, read by the one grammar every name goes
// through (engines/samebits.json's axes batch, batch_schedule and
// batch_seed; runner/engine_profile.h's ParseConfigurationName): each
// configuration has one spelling, and --config refuses the others saying
// why (what the engine is told for them: own_engine_argv_test.cc).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/batch.h"
#include "harness/runner/matrix.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

MatrixOptions OneScenario(std::vector<std::string> configs,
                          std::vector<std::string> math = {"portable"}) {
  MatrixOptions o;
  o.profile = harness::testing::OwnProfile();
  o.scenario_files = {"/s/classic.json"};
  o.checkpoints = {"synthetic:tiny"};
  o.configs = std::move(configs);
  o.math = std::move(math);
  return o;
}

harness::Configuration Only(const std::string& name, std::vector<std::string> math = {"portable"}) {
  const std::vector<Cell> cells = ExpandMatrix(OneScenario({name}, std::move(math)));
  EXPECT_EQ(cells.size(), 1u);
  return cells.front().config;
}

// Returns the message ExpandMatrix throws for `name`, or "" when it does not.
std::string Refusal(const std::string& name) {
  try {
    ExpandMatrix(OneScenario({name}));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BatchedName, NamesABatchOnAnyCpuConfiguration) {
  const harness::Configuration b4 = Only("cpu-t2-b4");
  EXPECT_EQ(b4.threads, 2);
  EXPECT_EQ(b4.kernels, "cpu");
  EXPECT_EQ(b4.batch, 4);
  EXPECT_EQ(b4.batch_seed, 1u);
  EXPECT_EQ(b4.batch_schedule, "together");

  const harness::Configuration b8 = Only("cpu-t3-b8-staggered");
  EXPECT_EQ(b8.threads, 3);
  EXPECT_EQ(b8.batch, 8);
  EXPECT_EQ(b8.batch_schedule, "staggered");

  const harness::Configuration seeded = Only("cpu-avx2-b4-seed7");
  EXPECT_EQ(seeded.isa, "avx2");
  EXPECT_EQ(seeded.batch_seed, 7u);

  const harness::Configuration chunked = Only("cpu-t3-chunk8k-b8-staggered-seed9");
  EXPECT_EQ(chunked.gemv_chunk_bytes, 8192);
  EXPECT_EQ(chunked.batch, 8);
  EXPECT_EQ(chunked.batch_seed, 9u);

  // Named alone under --math libm (with portable too, its portable twin
  // would be added: verdict_evidence_test.cc).
  const harness::Configuration libm = Only("cpu-t2-b4-libm", {"libm"});
  EXPECT_EQ(libm.math, "libm");
  EXPECT_EQ(libm.batch, 4);
  EXPECT_EQ(harness::DescribeBatch(libm), "batch 4 together");
  EXPECT_EQ(harness::DescribeBatch(seeded), "batch 4 together, seed 7");
}

// A batched name reads back as itself: the grammar's values, and the name
// it was read from, kept as given.
TEST(BatchedName, EveryBatchedNameReadsBackAsItself) {
  const EngineProfile& p = *harness::testing::OwnProfile();
  for (const char* name : {"cpu-t2-b8-staggered-libm", "cpu-t2-b4-seed3-libm",
                           "cpu-t2-b4-libm-int8", "cpu-avx2-b2-staggered-seed7"}) {
    const harness::Configuration c = OwnEngineConfiguration(p, name);
    EXPECT_EQ(c.name, name);
    EXPECT_TRUE(harness::IsBatched(c)) << name;
  }
  const harness::Configuration c = OwnEngineConfiguration(p, "cpu-t2-b4-seed3-libm");
  EXPECT_EQ(c.batch, 4);
  EXPECT_EQ(c.batch_seed, 3u);
  EXPECT_EQ(c.batch_schedule, "together");
  EXPECT_EQ(c.math, "libm");
}

// Under --quant-dot int8 a batch goes before the whole profile suffix
// (-int8, -libm-int8).
TEST(BatchedName, Int8NamesTakeTheirBatchBeforeTheProfileSuffix) {
  MatrixOptions o =
      OneScenario({"cpu-t2-b4-int8", "cpu-t3-b8-staggered-seed5-libm-int8"}, {"libm", "portable"});
  o.quant_dot = {"int8"};
  const std::vector<Cell> cells = ExpandMatrix(o);
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].config.name, "cpu-t2-b4-libm-int8");  // the twin, under --math libm first
  EXPECT_EQ(cells[1].config.name, "cpu-t2-b4-int8");
  EXPECT_EQ(cells[1].config.quant_dot, "int8");
  EXPECT_EQ(cells[1].config.math, "portable");
  EXPECT_EQ(cells[1].config.batch, 4);
  const harness::Configuration& b8 = cells[2].config;
  EXPECT_EQ(b8.name, "cpu-t3-b8-staggered-seed5-libm-int8");
  EXPECT_EQ(b8.math, "libm");
  EXPECT_EQ(b8.quant_dot, "int8");
  EXPECT_EQ(b8.batch, 8);
  EXPECT_EQ(b8.batch_seed, 5u);
  EXPECT_EQ(b8.batch_schedule, "staggered");
  EXPECT_EQ(cells[3].config.name, "cpu-t3-b8-staggered-seed5-int8");
  // The profile suffix is written once, after the batch.
  o.configs = {"cpu-t2-int8-b4"};
  EXPECT_THROW(ExpandMatrix(o), std::invalid_argument);
}

// Each refusal names the part that is wrong and what to write instead.
TEST(BatchedName, RefusesWhatIsNotOneBatchedConfiguration) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu-t2-b1", "'b1' names batch's default (1); leave it out"},
      {"cpu-t2-b65", "'b65' asks for batch 65, which is not a whole number from 1 to 64"},
      {"cpu-t2-b99999999999", "asks for batch 99999999999, which is not a whole number from 1"},
      {"cpu-t2-b4-together", "'together' names batch_schedule's default (together); leave it out"},
      {"cpu-t2-b4-seed1", "'seed1' names batch_seed's default (1); leave it out"},
      {"cpu-t2-b04", "'b04' is not a part"},
      {"reference-b4", "only the cpu kernels run batched (the reference kernels run one sequence)"},
      {"cpu-t2-b4-sometimes", "'sometimes' is not a part"},
      {"cpu-t2-b4-libm", "--math libm and --quant-dot exact, is not among those given"},
      {"cpu-t2-staggered-b4", "'b4' is not a part"},
  };
  for (const auto& [name, expected] : cases) {
    const std::string refusal = Refusal(name);
    EXPECT_NE(refusal.find("--config: unknown configuration '" + name + "'"), std::string::npos)
        << refusal;
    EXPECT_NE(refusal.find(expected), std::string::npos) << name << ": " << refusal;
  }
  // A base outside the default matrix is one the grammar reads.
  EXPECT_EQ(Refusal("cpu-t9-b4"), "");
  // An unknown name without a batch part is still unknown, and the message
  // says how to name a batch.
  EXPECT_NE(Refusal("cpu-t2-fast").find("-b<N>"), std::string::npos) << Refusal("cpu-t2-fast");
  // Negative control: a good name is not refused.
  EXPECT_EQ(Refusal("cpu-t3-b8-staggered"), "");
}

TEST(BatchedName, DescribesWhereTheSequenceSat) {
  harness::Configuration c;
  c.name = "cpu-t3-b8-staggered";
  c.batch = 8;
  c.batch_schedule = "staggered";
  EXPECT_EQ(harness::DescribeBatchPlace(c, harness::BatchPlace{6, 14, 3, 9}),
            "batch 8 staggered, slot 3 of 6 sequences, row 9 of 14");
  EXPECT_EQ(harness::DescribeBatchPlace(c, std::nullopt), "batch 8 staggered");
  harness::Configuration alone;
  EXPECT_EQ(harness::DescribeBatchPlace(alone, harness::BatchPlace{6, 14, 3, 9}), "");
  EXPECT_EQ(harness::PlaceInRuns("batch 4 together", "batch 4 together"), "batch 4 together");
  EXPECT_EQ(harness::PlaceInRuns("batch 4 together", ""), "A: batch 4 together; B: unbatched");
}

}  // namespace
}  // namespace samebits::runner
