// A verdict never calls different things equal: two cells count as agreeing
// only when both ran the same inputs (scenario contents, weights) and both
// produced steps; a run that holds two differing copies of a cell is
// refused; and every configuration named with --config runs under every
// --math profile. Each rule is tried over every way a cell can fall short,
// against both verdicts over two runs (`samebits compare`: CompareRuns;
// `samebits diff`: DiffRuns), and over every configuration the matrix
// knows, not over one case.
#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/analysis/run_compare.h"
#include "harness/report/run_diff.h"
#include "harness/runner/matrix.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::harness {
namespace {

using testing::MakeCell;

RunResult OneCellRun() {
  RunResult run;
  run.machine.arch = "x86_64";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t1", 7));
  run.cells.back().weights_xxh3 = "00000000000000a1";
  run.cells.back().scenario_xxh3 = "00000000000000c1";
  return run;
}

struct Degradation {
  std::string name;
  std::function<void(CellResult&)> apply;
  bool is_difference;  // counted as differing (else: not compared)
};

// Every way one side's cell can fall short of being evidence of agreement:
// each result code that is not a finished run, no steps at all, another
// scenario file under the same name, other weights under the same name.
std::vector<Degradation> Degradations() {
  std::vector<Degradation> out;
  for (const ResultCodeInfo& info : kResultCodes) {
    if (info.code == ResultCode::kPass || info.code == ResultCode::kFail) continue;
    out.push_back({std::string("code ") + info.name,
                   [code = info.code](CellResult& c) { c.code = code; }, false});
  }
  for (const ResultCode code : {ResultCode::kPass, ResultCode::kFail}) {
    out.push_back({std::string("no steps, ") + ResultCodeName(code),
                   [code](CellResult& c) {
                     c.code = code;
                     c.steps.clear();
                   },
                   false});
  }
  out.push_back({"another scenario file",
                 [](CellResult& c) { c.scenario_xxh3 = "00000000000000c2"; }, false});
  out.push_back(
      {"other weights", [](CellResult& c) { c.weights_xxh3 = "00000000000000a2"; }, true});
  return out;
}

// The same cell degraded on either side, or on both: never "agree", and
// the comparison never passes on it.
TEST(VerdictEvidence, ACellThatFallsShortIsNeverCountedAsAgreeing) {
  for (const Degradation& d : Degradations()) {
    for (int side = 0; side < 3; ++side) {
      RunResult a = OneCellRun(), b = OneCellRun();
      if (side != 1) d.apply(a.cells[0]);
      if (side != 0) d.apply(b.cells[0]);
      // Both sides with the same other scenario or weights are the same thing.
      const bool same_inputs =
          side == 2 && (d.name == "another scenario file" || d.name == "other weights");
      const RunComparison c = CompareRuns(a, b, "A", "B");
      if (same_inputs) {
        EXPECT_EQ(c.agree, 1) << d.name;
        continue;
      }
      EXPECT_EQ(c.agree, 0) << d.name << " on side " << side << "\n" << FormatComparison(c);
      EXPECT_NE(c.ExitCode(), 0) << d.name << " on side " << side;
      if (d.is_difference) {
        EXPECT_EQ(c.differ, 1) << d.name;
      }
      // `samebits diff` asks whether the stored records changed: one side
      // degraded is a change, and a cell with no step on either side is no
      // evidence; two identical failures are the same record.
      const report::RunDiff diff = report::DiffRuns(a, b);
      const bool no_output = d.name.rfind("no steps", 0) == 0;
      if (side != 2 || no_output) {
        EXPECT_FALSE(diff.Identical()) << d.name << " on side " << side;
        EXPECT_NE(diff.ExitCode(), 0) << d.name << " on side " << side;
      }
      if (side != 2) {
        EXPECT_EQ(diff.differs, 1) << d.name;
      }
    }
  }
  // Negative control: the undegraded cell agrees.
  EXPECT_EQ(CompareRuns(OneCellRun(), OneCellRun(), "A", "B").agree, 1);
  EXPECT_TRUE(report::DiffRuns(OneCellRun(), OneCellRun()).Identical());
}

// Other weights under one checkpoint name are a cause of their own, ranked
// above every other (also above another revision), and never blamed on the
// code.
TEST(VerdictEvidence, OtherWeightsAreTheirOwnCauseRankedFirst) {
  RunResult a = OneCellRun(), b = OneCellRun();
  b.cells[0].weights_xxh3 = "00000000000000a2";
  b.cells[0].steps[1].xxh3_64 ^= 1;
  b.cells[0].build->revision = "fedcba9876543210fedcba9876543210fedcba98";
  const RunComparison c = CompareRuns(a, b, "A", "B");
  ASSERT_EQ(c.differ, 1);
  EXPECT_EQ(c.cells[0].cause, CompareCause::kWeights) << FormatComparison(c);
  EXPECT_EQ(c.by_cause[static_cast<size_t>(CompareCause::kCode)], 0);
  EXPECT_NE(c.headline.find("the weights differ"), std::string::npos) << c.headline;
  EXPECT_EQ(kCompareCauses.front().cause, CompareCause::kWeights);
  // `samebits diff` names the weights before the step that differs, and
  // with equal steps still calls the runs different.
  const report::RunDiff diff = report::DiffRuns(a, b);
  EXPECT_EQ(diff.ExitCode(), 1);
  std::ostringstream md;
  report::WriteRunDiffMarkdown(diff, a, b, md);
  const size_t weights = md.str().find("weights xxh3 00000000000000a1 vs 00000000000000a2");
  EXPECT_NE(weights, std::string::npos) << md.str();
  EXPECT_LT(weights, md.str().find("step 1")) << md.str();
  b.cells[0].steps = a.cells[0].steps;
  EXPECT_EQ(report::DiffRuns(a, b).differs, 1);
}

// A side holding two copies of one cell that differ in any way is refused
// (one copy was silently dropped); identical copies count once.
TEST(VerdictEvidence, TwoDifferingCopiesOfACellAreRefused) {
  for (const Degradation& d : Degradations()) {
    for (int side = 0; side < 2; ++side) {
      RunResult a = OneCellRun(), b = OneCellRun();
      RunResult& holder = side == 0 ? a : b;
      CellResult copy = holder.cells[0];
      d.apply(copy);
      holder.cells.push_back(copy);
      EXPECT_THROW(CompareRuns(a, b, "A", "B"), std::invalid_argument) << d.name;
      EXPECT_THROW(report::DiffRuns(a, b), std::invalid_argument) << d.name;
    }
  }
  RunResult twice = OneCellRun();
  twice.cells.push_back(twice.cells[0]);
  const RunComparison c = CompareRuns(twice, OneCellRun(), "A", "B");
  EXPECT_EQ(c.agree, 1);
  EXPECT_EQ(c.cells.size(), 1u);
  const report::RunDiff diff = report::DiffRuns(twice, OneCellRun());
  EXPECT_TRUE(diff.Identical());
  EXPECT_EQ(diff.cells.size(), 1u);
}

// Every configuration the matrix knows, named alone with --math
// portable,libm, runs under both profiles; and named in its libm form it
// gets its portable twin.
TEST(VerdictEvidence, EveryNamedConfigurationRunsUnderEveryMathProfile) {
  const std::vector<int> threads = {1, 2};
  const auto portable =
      runner::DefaultConfigurations(*testing::OwnProfile(), threads, {"portable"}, 8192);
  ASSERT_GT(portable.size(), 5u);
  for (const Configuration& config : portable) {
    for (const std::string& named : {config.name, config.name + "-libm"}) {
      runner::MatrixOptions o;
      o.profile = testing::OwnProfile();
      o.scenario_files = {"/s/classic.json"};
      o.checkpoints = {"synthetic:tiny"};
      o.threads = threads;
      o.math = {"portable", "libm"};
      o.configs = {named};
      const auto cells = runner::ExpandMatrix(o);
      std::vector<std::string> got;
      got.reserve(cells.size());
      for (const runner::Cell& cell : cells) {
        got.push_back(cell.config.name + "/" + cell.config.math);
      }
      EXPECT_EQ(got,
                (std::vector<std::string>{config.name + "/portable", config.name + "-libm/libm"}))
          << "--config " << named;
    }
  }
  // Only the profiles asked for: --math portable adds no libm twin.
  runner::MatrixOptions o;
  o.profile = testing::OwnProfile();
  o.scenario_files = {"/s/classic.json"};
  o.checkpoints = {"synthetic:tiny"};
  o.configs = {"reference"};
  EXPECT_EQ(runner::ExpandMatrix(o).size(), 1u);
}

}  // namespace
}  // namespace samebits::harness
