// Batched configuration names (harness/runner/batched_name.h): the name
// grammar and its one spelling per configuration (what the engine is told
// for them: own_engine_argv_test.cc).
#include "harness/runner/batched_name.h"

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
  const std::vector<Cell> cells =
      ExpandMatrix(OneScenario({name}, std::move(math)), {"scalar", "avx2"}, "x86_64");
  EXPECT_EQ(cells.size(), 1u);
  return cells.front().config;
}

// Returns the message ExpandMatrix throws for `name`, or "" when it does not.
std::string Refusal(const std::string& name) {
  try {
    ExpandMatrix(OneScenario({name}), {"scalar"}, "x86_64");
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

TEST(BatchedName, BatchedWritesTheOneName) {
  harness::Configuration base;
  base.name = "cpu-t2-libm";
  base.threads = 2;
  base.math = "libm";
  EXPECT_EQ(Batched(base, 8, 1, "staggered").name, "cpu-t2-b8-staggered-libm");
  EXPECT_EQ(Batched(base, 4, 3, "together").name, "cpu-t2-b4-seed3-libm");
  // Every name Batched writes reads back as the same configuration.
  const std::vector<harness::Configuration> all =
      DefaultConfigurations(*harness::testing::OwnProfile(), {2}, {"libm"}, 8192);
  for (const harness::Configuration& c :
       {Batched(base, 8, 1, "staggered"), Batched(base, 4, 3, "together")}) {
    const auto parsed = ParseBatchedName(c.name, all);
    ASSERT_TRUE(parsed) << c.name;
    EXPECT_EQ(parsed->batch, c.batch);
    EXPECT_EQ(parsed->batch_seed, c.batch_seed);
    EXPECT_EQ(parsed->batch_schedule, c.batch_schedule);
  }
}

// Under --quant-dot int8 a batch goes before the whole profile suffix
// (-int8, -libm-int8), and every name Batched writes reads back.
TEST(BatchedName, Int8NamesTakeTheirBatchBeforeTheProfileSuffix) {
  MatrixOptions o =
      OneScenario({"cpu-t2-b4-int8", "cpu-t3-b8-staggered-seed5-libm-int8"}, {"libm", "portable"});
  o.quant_dot = {"int8"};
  const std::vector<Cell> cells = ExpandMatrix(o, {"scalar"}, "x86_64");
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
  EXPECT_THROW(ExpandMatrix(o, {"scalar"}, "x86_64"), std::invalid_argument);
  harness::Configuration base;
  base.name = "cpu-t2-libm-int8";
  base.threads = 2;
  base.math = "libm";
  base.quant_dot = "int8";
  EXPECT_EQ(Batched(base, 4, 1, "together").name, "cpu-t2-b4-libm-int8");
}

TEST(BatchedName, RefusesWhatIsNotOneBatchedConfiguration) {
  EXPECT_NE(Refusal("cpu-t2-b1").find("write cpu-t2"), std::string::npos) << Refusal("cpu-t2-b1");
  EXPECT_NE(Refusal("cpu-t2-b65").find("a batch is 2 to 64"), std::string::npos);
  EXPECT_NE(Refusal("cpu-t2-b99999999999").find("a batch is 2 to 64"), std::string::npos);
  EXPECT_NE(Refusal("cpu-t2-b4-together").find("as cpu-t2-b4"), std::string::npos)
      << Refusal("cpu-t2-b4-together");
  EXPECT_NE(Refusal("cpu-t2-b4-seed1").find("as cpu-t2-b4"), std::string::npos);
  EXPECT_NE(Refusal("cpu-t2-b04").find("as cpu-t2-b4"), std::string::npos);
  EXPECT_NE(Refusal("reference-b4").find("only the cpu kernels run batched"), std::string::npos);
  // A base outside the default matrix is one the profile's grammar reads.
  EXPECT_EQ(Refusal("cpu-t9-b4"), "");
  EXPECT_NE(Refusal("cpu-t2-b4-sometimes").find("batches cpu-t2-sometimes"), std::string::npos)
      << Refusal("cpu-t2-b4-sometimes");
  EXPECT_NE(Refusal("cpu-t2-b4-libm").find("batches cpu-t2-libm"), std::string::npos)
      << "no libm profile was selected";
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
