// `samebits compare` with raw logit dumps (harness/analysis/run_compare.h,
// logit_difference.h): two bundles whose dumps differ in one logit by 3 ulp
// say exactly that, in the terminal text and in the reports' diagnosis;
// with statistics only they say the argmaxes and max |logit|; a dump file
// of a stored run is read; without dumps nothing is claimed.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "harness/analysis/run_compare.h"
#include "harness/exchange/bundle.h"
#include "harness/exchange/bundle_dumps.h"
#include "tests/harness/dump_test_util.h"

namespace samebits::harness {
namespace {

using testing::DumpedCell;
using testing::DumpValues;
using testing::kDumpVocab;
using testing::TempDir;

class CompareDumpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    values_ = DumpValues(2);
    other_ = values_;
    // One logit of step 2, not the row's largest, 3 ulp up.
    size_t at = size_t{2} * kDumpVocab;
    while (!(values_[at] > 1 && values_[at] < 8)) ++at;
    other_[at] = testing::UlpsAbove(values_[at], 3);
    a_ = Machine(values_, dir_.File("a.f32"));
    b_ = Machine(other_, dir_.File("b.f32"));
  }

  static RunResult Machine(const std::vector<float>& values, const std::string& dump) {
    RunResult run;
    run.machine.arch = "x86_64";
    run.cells.push_back(DumpedCell("cpu-t1", values, dump));
    run.cells.push_back(DumpedCell("cpu-t2", DumpValues(2), ""));  // the same, no dump
    return run;
  }

  // Returns `run` as it comes out of a bundle exported with `max_bytes`.
  static RunResult ThroughBundle(RunResult run, uint64_t max_bytes) {
    EXPECT_TRUE(exchange::AttachDumps(run, "", max_bytes).empty());
    return exchange::ParseBundle(exchange::FormatBundle({run}), "x.json").at(0);
  }

  TempDir dir_;
  std::vector<float> values_, other_;
  RunResult a_, b_;
};

TEST_F(CompareDumpsTest, BundlesSayHowManyUlpAndHowManyLogits) {
  const RunResult a = ThroughBundle(a_, exchange::kDefaultMaxDumpBytes);
  const RunResult b = ThroughBundle(b_, exchange::kDefaultMaxDumpBytes);
  // The files are gone: the bundles' rows are all there is.
  std::filesystem::remove(dir_.File("a.f32"));
  std::filesystem::remove(dir_.File("b.f32"));
  const RunComparison c = CompareRuns(a, b, "A", "B");
  ASSERT_EQ(c.differ, 1);
  const CellComparison& cell = c.cells[0];
  ASSERT_EQ(cell.outcome, CellOutcome::kDiffer);
  EXPECT_EQ(cell.step->index, 2);
  ASSERT_TRUE(cell.logits);
  EXPECT_TRUE(cell.logits->compared_rows);
  EXPECT_EQ(cell.logits->rows.max_ulp, 3u);
  EXPECT_EQ(cell.logits->rows.differing, 1);
  const std::string line = DescribeCellDifference(cell);
  EXPECT_NE(line.find("logits: max 3 ulp, 1 of 256 values differ"), std::string::npos) << line;
  EXPECT_NE(line.find("on both"), std::string::npos) << line;
  EXPECT_NE(FormatComparison(c).find("max 3 ulp, 1 of 256 values differ"), std::string::npos);
  // The reports (Markdown, HTML, JSON, JUnit) show the diagnosis's divergences.
  const RunResult as_run = ComparisonAsRun(c, a);
  ASSERT_EQ(as_run.diagnosis.divergences.size(), 1u);
  EXPECT_NE(as_run.diagnosis.divergences[0].detail.find("max 3 ulp, 1 of 256 values differ"),
            std::string::npos)
      << as_run.diagnosis.divergences[0].detail;
  for (const CellResult& x : as_run.cells) EXPECT_FALSE(x.dump);
}

TEST_F(CompareDumpsTest, ADumpFileOfAStoredRunIsRead) {
  const RunComparison c =
      CompareRuns(a_, ThroughBundle(b_, exchange::kDefaultMaxDumpBytes), "A", "B");
  ASSERT_TRUE(c.cells[0].logits);
  EXPECT_EQ(c.cells[0].logits->rows.max_ulp, 3u);
  // Not reading dumps claims nothing.
  CompareOptions off;
  off.read_dumps = false;
  EXPECT_FALSE(CompareRuns(a_, b_, "A", "B", off).cells[0].logits);
}

TEST_F(CompareDumpsTest, StatisticsOnlySayTheArgmaxesAndLargestLogits) {
  const RunComparison c = CompareRuns(ThroughBundle(a_, 0), ThroughBundle(b_, 0), "A", "B");
  ASSERT_TRUE(c.cells[0].logits);
  EXPECT_FALSE(c.cells[0].logits->compared_rows);
  const DumpRowStats s =
      RowStatistics(std::span<const float>(values_.data() + size_t{2} * kDumpVocab, kDumpVocab));
  char max_abs[32];
  std::snprintf(max_abs, sizeof max_abs, "%.6g", static_cast<double>(s.max_abs));
  const std::string line = DescribeCellDifference(c.cells[0]);
  EXPECT_NE(line.find("logits (statistics only): argmax " + std::to_string(s.argmax) +
                      " on both, max |logit| " + max_abs + " vs " + max_abs),
            std::string::npos)
      << line;
  // One side with rows, the other with statistics: statistics.
  const RunComparison mixed = CompareRuns(ThroughBundle(a_, exchange::kDefaultMaxDumpBytes),
                                          ThroughBundle(b_, 0), "A", "B");
  ASSERT_TRUE(mixed.cells[0].logits);
  EXPECT_FALSE(mixed.cells[0].logits->compared_rows);
}

TEST_F(CompareDumpsTest, WithoutDumpsNothingIsSaidOfTheLogits) {
  RunResult a = a_, b = b_;
  a.cells[0].dump_path.clear();
  b.cells[0].dump_path.clear();
  const RunComparison c = CompareRuns(a, b, "A", "B");
  ASSERT_EQ(c.differ, 1);
  EXPECT_FALSE(c.cells[0].logits);
  EXPECT_EQ(FormatComparison(c).find("; logits"), std::string::npos) << FormatComparison(c);
  // A dump that cannot be read says so rather than failing the comparison.
  std::filesystem::remove(dir_.File("b.f32"));
  const RunComparison gone = CompareRuns(a_, b_, "A", "B");
  ASSERT_TRUE(gone.cells[0].logits);
  EXPECT_NE(DescribeCellDifference(gone.cells[0]).find("logits not compared: logit dump"),
            std::string::npos);
}

}  // namespace
}  // namespace samebits::harness
