// Differences between two runs (harness/report/run_diff.h).
#include <gtest/gtest.h>

#include <sstream>

#include "harness/report/run_diff.h"
#include "tests/harness/report_fixture.h"

namespace samebits::harness::report {
namespace {

TEST(RunDiff, ARunIsIdenticalToItself) {
  const RunResult run = testing::MixedRun();
  const RunDiff diff = DiffRuns(run, run);
  EXPECT_TRUE(diff.Identical());
  // Cells without a step (UNSUPPORTED, a hang before any output) are no
  // evidence: counted apart, never as identical.
  int with_steps = 0;
  for (const CellResult& c : run.cells) with_steps += c.steps.empty() ? 0 : 1;
  ASSERT_LT(with_steps, static_cast<int>(run.cells.size()));
  EXPECT_EQ(diff.same, with_steps);
  EXPECT_EQ(diff.no_output, static_cast<int>(run.cells.size()) - with_steps);
  std::ostringstream out;
  WriteRunDiffMarkdown(diff, run, run, out);
  EXPECT_NE(out.str().find("identical"), std::string::npos);
  EXPECT_EQ(out.str().find("| Checkpoint |"), std::string::npos);
}

TEST(RunDiff, NamesTheFirstDifferingStepAndMissingCells) {
  const RunResult a = testing::MixedRun();
  RunResult b = a;
  b.run_id = 43;
  b.cells[1].steps[4].xxh3_64 ^= 1;  // cpu-t1 differs at step 4 only
  b.cells[1].steps[4].token = 99;
  b.cells[0].steps.pop_back();         // reference lost its last step
  b.cells.erase(b.cells.begin() + 3);  // cpu-avx512 only in A
  CellResult extra = a.cells[1];
  extra.config.name = "cpu-t4";
  b.cells.push_back(extra);  // only in B
  const RunDiff diff = DiffRuns(a, b);
  EXPECT_FALSE(diff.Identical());
  EXPECT_EQ(diff.differs, 2);
  EXPECT_EQ(diff.only_a, 1);
  EXPECT_EQ(diff.only_b, 1);
  const CellDiff& t1 = diff.cells[1];
  EXPECT_EQ(t1.config, "cpu-t1");
  EXPECT_EQ(t1.status, CellDiff::Status::kDiffers);
  EXPECT_EQ(t1.first_index, 4);
  EXPECT_EQ(t1.differing_steps, 1);
  const CellDiff& ref = diff.cells[0];
  EXPECT_EQ(ref.first_index, 5);
  EXPECT_TRUE(ref.first_a.has_value());
  EXPECT_FALSE(ref.first_b.has_value());

  std::ostringstream out;
  WriteRunDiffMarkdown(diff, a, b, out);
  const std::string md = out.str();
  EXPECT_NE(md.find("run 42 vs run 43: DIFFERENT"), std::string::npos) << md;
  EXPECT_NE(md.find("| cpu-t1 | PASS (6 steps) | PASS (6 steps) | 1 | step 4 (extend, position "
                    "14): xxh3 "),
            std::string::npos)
      << md;
  EXPECT_NE(md.find(", token 11 vs 99 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| cpu-avx512 | UNSUPPORTED (0 steps) | — (0 steps) | 0 | only in A |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("only in B"), std::string::npos);
  // The hostile checkpoint name is escaped here too.
  EXPECT_EQ(md.find("<script"), std::string::npos);
}

// Identical steps from two different scenario files under one name are a
// difference: `samebits diff` exits 1 and names the scenario.
TEST(RunDiff, TwoScenariosUnderOneNameDiffer) {
  RunResult a = testing::MixedRun();
  for (CellResult& c : a.cells) c.scenario_xxh3 = "00000000000000aa";
  RunResult b = a;
  EXPECT_TRUE(DiffRuns(a, b).Identical());
  b.cells[0].scenario_xxh3 = "00000000000000bb";
  const RunDiff diff = DiffRuns(a, b);
  EXPECT_FALSE(diff.Identical());
  EXPECT_EQ(diff.differs, 1);
  std::ostringstream out;
  WriteRunDiffMarkdown(diff, a, b, out);
  EXPECT_NE(out.str().find("is not the same file on both sides: content xxh3 00000000000000aa vs "
                           "00000000000000bb"),
            std::string::npos)
      << out.str();
  // Unknown on one side (a run stored before): nothing to flag.
  b.cells[0].scenario_xxh3.clear();
  EXPECT_TRUE(DiffRuns(a, b).Identical());
}

TEST(RunDiff, ReportsAChangedMathLibrary) {
  const RunResult a = testing::MathLibraryRun();
  RunResult b = a;
  for (CellResult& c : b.cells) {
    c.math->fingerprint = "0000000000000001";
    for (StepRecord& s : c.steps) s.fnv1a64 ^= 2;
  }
  std::ostringstream out;
  WriteRunDiffMarkdown(DiffRuns(a, b), a, b, out);
  EXPECT_NE(out.str().find("Math library fingerprint differs: fedcba9876543210 in A, "
                           "0000000000000001 in B."),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace samebits::harness::report
