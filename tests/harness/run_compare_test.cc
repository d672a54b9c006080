// Comparing two runs (harness/analysis/run_compare.h) on synthetic runs:
// each cause is named for the right difference, the highest-ranked leads
// the headline, and cells that did not run on both sides are never counted
// as agreeing.
#include "harness/analysis/run_compare.h"

#include <gtest/gtest.h>

#include "harness/analysis/verdict.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::harness {
namespace {

using testing::MakeCell;

// One machine's run: portable and libm cells of one scenario.
RunResult MachineRun() {
  RunResult run;
  run.machine.arch = "x86_64";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t2", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1-libm", 9, 4, "libm"));
  for (CellResult& c : run.cells) c.isa_used = "avx2";
  return run;
}

void ChangeHashes(RunResult& run, const std::string& math) {
  for (CellResult& c : run.cells) {
    if (c.config.math == math) c.steps[2].xxh3_64 ^= 1;
  }
}

int Count(const RunComparison& c, CompareCause cause) {
  return c.by_cause[static_cast<size_t>(cause)];
}

TEST(RunCompare, IdenticalRunsAgree) {
  const RunComparison c = CompareRuns(MachineRun(), MachineRun(), "A", "B");
  EXPECT_EQ(c.agree, 3);
  EXPECT_EQ(c.differ, 0);
  EXPECT_EQ(c.ExitCode(), 0);
  EXPECT_TRUE(GatePasses(ComparisonAsRun(c, MachineRun())));
}

TEST(RunCompare, AnotherMathLibraryIsTheMathLibrary) {
  RunResult b = MachineRun();
  b.cells[2].math->fingerprint = "00000000000000cc";
  ChangeHashes(b, "libm");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(c.differ, 1);
  EXPECT_EQ(Count(c, CompareCause::kMathLibrary), 1) << FormatComparison(c);
  EXPECT_NE(c.headline.find("the math library differs"), std::string::npos) << c.headline;
  EXPECT_EQ(c.ExitCode(), 1);
  const RunResult as_run = ComparisonAsRun(c, MachineRun());
  EXPECT_EQ(GateExitCode(RunVerdict(as_run)), 1);
  EXPECT_EQ(as_run.diagnosis.kind, Diagnosis::Kind::kMathLibraryDiffers);
}

TEST(RunCompare, AnotherRevisionIsTheCodeAndTheBuildsAreNamed) {
  RunResult b = MachineRun();
  for (CellResult& c : b.cells) c.build->revision = "fedcba9876543210fedcba9876543210fedcba98";
  ChangeHashes(b, "portable");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(Count(c, CompareCause::kCode), 2) << FormatComparison(c);
  EXPECT_NE(c.headline.find("the code differs"), std::string::npos) << c.headline;
  EXPECT_NE(c.context[0].find("The builds differ"), std::string::npos) << c.context[0];
}

TEST(RunCompare, APortableFingerprintChangeIsTheCode) {
  RunResult b = MachineRun();
  for (CellResult& c : b.cells)
    if (c.config.math == "portable") c.math->fingerprint = "00000000000000ab";
  ChangeHashes(b, "portable");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(Count(c, CompareCause::kCode), 2) << FormatComparison(c);
}

TEST(RunCompare, CodeAndMathLibraryAtOnceRanksTheCodeFirst) {
  RunResult b = MachineRun();
  for (CellResult& c : b.cells)
    if (c.config.math == "portable") c.math->fingerprint = "00000000000000ab";
  b.cells[2].math->fingerprint = "00000000000000cc";
  ChangeHashes(b, "portable");
  ChangeHashes(b, "libm");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(c.differ, 3);
  // The libm cell differs with the code changed too: the code ranks first.
  EXPECT_EQ(Count(c, CompareCause::kCode), 3) << FormatComparison(c);
  EXPECT_NE(c.headline.find("the code differs"), std::string::npos) << c.headline;
  EXPECT_EQ(ComparisonAsRun(c, MachineRun()).diagnosis.kind, Diagnosis::Kind::kCodeChanged);
}

TEST(RunCompare, AnIsaOnlyBreakIsTheIsa) {
  RunResult b = MachineRun();
  b.cells[1].isa_used = "avx512";
  b.cells[1].steps[0].xxh3_64 ^= 1;
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(c.differ, 1);
  EXPECT_EQ(Count(c, CompareCause::kIsa), 1) << FormatComparison(c);
  EXPECT_NE(c.headline.find("the ISA differs"), std::string::npos) << c.headline;
}

TEST(RunCompare, AnotherArchitectureIsTheArchitecture) {
  RunResult b = MachineRun();
  b.machine.arch = "aarch64";
  ChangeHashes(b, "libm");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(Count(c, CompareCause::kArchitecture), 1) << FormatComparison(c);
  EXPECT_NE(c.headline.find("the architecture differs"), std::string::npos) << c.headline;
}

TEST(RunCompare, AnotherCompilerIsTheCompiler) {
  RunResult b = MachineRun();
  for (CellResult& c : b.cells) c.build->flags = "-O2";
  ChangeHashes(b, "portable");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(Count(c, CompareCause::kCompiler), 2) << FormatComparison(c);
}

TEST(RunCompare, NothingDifferentIsUnexplained) {
  RunResult b = MachineRun();
  ChangeHashes(b, "portable");
  const RunComparison c = CompareRuns(MachineRun(), b, "A", "B");
  EXPECT_EQ(Count(c, CompareCause::kUnexplained), 2) << FormatComparison(c);
}

TEST(RunCompare, UnsupportedAndMissingCellsAreNotCompared) {
  RunResult a = MachineRun();
  RunResult b = MachineRun();
  b.cells[1].code = ResultCode::kUnsupported;
  b.cells[1].steps.clear();
  a.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-avx512", 7));
  const RunComparison c = CompareRuns(a, b, "A", "B");
  EXPECT_EQ(c.agree, 2);
  EXPECT_EQ(c.not_compared, 2);
  EXPECT_EQ(c.ExitCode(), 0);
  EXPECT_NE(c.headline.find("(2 not compared)"), std::string::npos) << c.headline;
  const RunResult as_run = ComparisonAsRun(c, a);
  int unsupported = 0;
  for (const CellResult& cell : as_run.cells) unsupported += cell.code == ResultCode::kUnsupported;
  EXPECT_EQ(unsupported, 4);

  // Nothing ran on both sides: the comparison could not be made.
  for (CellResult& cell : b.cells) cell.code = ResultCode::kUnsupported;
  const RunComparison none = CompareRuns(a, b, "A", "B");
  EXPECT_EQ(none.agree + none.differ, 0);
  EXPECT_EQ(none.ExitCode(), 2);
  EXPECT_EQ(GateExitCode(RunVerdict(ComparisonAsRun(none, a))), 2);
}

// Results are keyed by the scenario's name: two different files under one
// name are refused, not compared, however their steps look.
TEST(RunCompare, TwoScenariosUnderOneNameAreNotCompared) {
  RunResult a = MachineRun();
  RunResult b = MachineRun();
  for (CellResult& c : a.cells) c.scenario_xxh3 = "00000000000000aa";
  for (CellResult& c : b.cells) c.scenario_xxh3 = "00000000000000aa";
  EXPECT_EQ(CompareRuns(a, b, "A", "B").agree, 3);  // the same file: compared
  b.cells[0].scenario_xxh3 = "00000000000000bb";
  const RunComparison c = CompareRuns(a, b, "A", "B");
  EXPECT_EQ(c.agree, 2);
  EXPECT_EQ(c.not_compared, 1);
  EXPECT_NE(c.cells[0].reason.find("scenario 'classic' is not the same file on both sides"),
            std::string::npos)
      << c.cells[0].reason;
  // A side stored before the hash was recorded cannot tell: compared.
  b.cells[0].scenario_xxh3.clear();
  EXPECT_EQ(CompareRuns(a, b, "A", "B").agree, 3);
}

TEST(RunCompare, TracesNameTheFirstDivergingLayerAndOp) {
  RunResult a = MachineRun();
  a.cells[0].traces = {{10, -1, "embed", 1}, {10, 0, "attn_norm", 2}, {10, 1, "ffn_down", 3}};
  RunResult b = a;
  b.cells[0].traces[2].xxh3_64 = 4;
  b.cells[0].steps[1].xxh3_64 ^= 1;
  const RunComparison c = CompareRuns(a, b, "A", "B");
  ASSERT_EQ(c.differ, 1);
  const CellComparison& d = c.cells[0];
  ASSERT_TRUE(d.trace.has_value());
  EXPECT_EQ(d.trace->layer, 1);
  EXPECT_EQ(d.trace->op, "ffn_down");
  EXPECT_EQ(d.step->index, 1);
  EXPECT_NE(DescribeCellDifference(d).find("layer 1, op ffn_down"), std::string::npos);
}

}  // namespace
}  // namespace samebits::harness
