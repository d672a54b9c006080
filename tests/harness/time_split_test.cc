// Where a cell's time goes (harness/analysis/time_split.h, the split made by
// runner/cell_runner.cc): the child's parts come from when its lines arrived
// and the load time its `done` reports, and add up to its wall time.
#include "harness/analysis/time_split.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/protocol/records.h"
#include "harness/report/exporter.h"
#include "harness/runner/cell_runner.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::CellResult;
using harness::CellTiming;
using harness::testing::BinDir;
using harness::testing::FakeEngine;

std::string HelloLine() {
  protocol::Hello h;
  h.engine = {"samebits-engine", "0.1.0"};
  h.build = {"r", false, "c", "f"};
  h.platform = {"x86_64", "unknown", "Linux", "6.1", "glibc 2.36", {}};
  h.math = {"portable", "samebits-portable", "1", "0000000000000001"};
  h.config = {"synthetic:tiny", "classic", "reference", 1, "scalar", 0, "portable"};
  h.checkpoint = {"synthetic:tiny", "0000000000000002", 256};
  return protocol::ToJsonLine(h) + "\n";
}

// A `done` of no steps after `elapsed_ms`, its optional fields unset.
protocol::Done DoneAfter(double elapsed_ms) {
  protocol::Done done;
  done.elapsed_ms = elapsed_ms;
  return done;
}

Cell TinyCell() {
  Cell cell;
  cell.checkpoint = "synthetic:tiny";
  cell.scenario = "classic";
  cell.scenario_file = std::string(SAMEBITS_SOURCE_DIR) + "/scenarios/classic.json";
  cell.config.name = "reference";
  cell.config.kernels = "reference";
  cell.config.threads = 1;
  return cell;
}

double ChildSum(const CellTiming& t) {
  return std::max(0.0, t.start_ms) + std::max(0.0, t.load_ms) + t.steps_ms + t.exit_ms;
}

// Worked by hand: hello arrives at 50 ms, the engine says it spent 30 of
// them loading, `done` arrives at 80 ms and the child is reaped at 90 ms.
TEST(TimeSplit, TheChildsPartsComeFromItsLinesAndItsLoadTime) {
  protocol::Done done = DoneAfter(1.0);
  done.load_ms = 30;
  ChildOutcome outcome;
  outcome.started = true;
  const std::string hello = HelloLine();
  outcome.stdout_text = hello + protocol::ToJsonLine(done) + "\n";
  outcome.stdout_arrivals = {{hello.size(), 50.0}, {outcome.stdout_text.size(), 80.0}};
  outcome.elapsed_ms = 90;
  const CellTiming t = JudgeChild(TinyCell(), outcome).timing;
  EXPECT_EQ(t.start_ms, 20);
  EXPECT_EQ(t.load_ms, 30);
  EXPECT_EQ(t.steps_ms, 30);
  EXPECT_EQ(t.exit_ms, 10);

  // An engine that reports no load time: everything before hello is start.
  outcome.stdout_text = hello + protocol::ToJsonLine(DoneAfter(1.0)) + "\n";
  outcome.stdout_arrivals = {{hello.size(), 50.0}, {outcome.stdout_text.size(), 80.0}};
  const CellTiming old = JudgeChild(TinyCell(), outcome).timing;
  EXPECT_EQ(old.start_ms, 50);
  EXPECT_LT(old.load_ms, 0) << "not measured";
  EXPECT_EQ(old.steps_ms, 30);

  // A child that never finished a line spent its whole time starting.
  ChildOutcome silent;
  silent.started = true;
  silent.elapsed_ms = 12;
  const CellTiming nothing = JudgeChild(TinyCell(), silent).timing;
  EXPECT_EQ(nothing.start_ms, 12);
  EXPECT_LT(nothing.steps_ms, 0);
}

TEST(TimeSplit, ARealEnginesCellSplitsIntoPartsThatAddUpToItsWallTime) {
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = BinDir() + "/samebits-engine";
  const CellResult r = RunCell(TinyCell(), options);
  ASSERT_EQ(r.code, harness::ResultCode::kPass) << r.message;
  const CellTiming& t = r.timing;
  EXPECT_GE(t.start_ms, 0);
  EXPECT_GT(t.load_ms, 0) << "samebits-engine reports its load in `done`";
  EXPECT_GE(t.steps_ms, 0);
  EXPECT_GE(t.exit_ms, 0);
  EXPECT_GE(t.judge_ms, 0);
  EXPECT_LT(t.store_ms, 0) << "the runner stores nothing";
  EXPECT_NEAR(ChildSum(t), r.elapsed_ms, 1e-6 * r.elapsed_ms);
}

TEST(TimeSplit, AnEngineWithoutALoadTimeStillSplitsItsWallTime) {
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = FakeEngine();
  Cell cell = TinyCell();
  cell.checkpoint = "fake:ok";
  // The fake engine prints five rows whatever its scenario: one with five
  // output rows, so its step count checks (runner/engine_claims.h).
  cell.scenario_file =
      (std::filesystem::temp_directory_path() / "samebits_time_split_five_rows.json").string();
  std::ofstream(cell.scenario_file)
      << R"({"name": "classic", "prompt": {"tokens": [1, 2]}, "steps": [{"prefill": "prompt"}, {"decode": 4}]})";
  const CellResult r = RunCell(cell, options);
  ASSERT_EQ(r.code, harness::ResultCode::kPass) << r.message;
  EXPECT_LT(r.timing.load_ms, 0);
  EXPECT_GT(r.timing.start_ms, 0);
  EXPECT_NEAR(ChildSum(r.timing), r.elapsed_ms, 1e-6 * r.elapsed_ms);
}

harness::RunResult TwoTimedCells() {
  harness::RunResult run;
  CellResult a;
  a.checkpoint = "synthetic:tiny";
  a.scenario = "classic";
  a.config.name = "reference";
  a.elapsed_ms = 100;
  a.timing = {10, 60, 20, 10, 1, 2};
  CellResult b = a;
  b.config.name = "cpu-t2";
  b.elapsed_ms = 50;
  b.timing = {20, -1, 20, 10, 1, 3};  // no load reported
  CellResult stored = a;              // a stored cell: nothing measured
  stored.timing = {};
  run.cells = {a, b, stored};
  return run;
}

TEST(TimeSplit, TheRunsTotalsSumEachMeasuredPart) {
  const harness::TimeTotals totals = harness::SumTiming(TwoTimedCells());
  EXPECT_EQ(totals.cells, 2);
  EXPECT_EQ(totals.child_ms, 150);
  EXPECT_EQ(totals.sum, (CellTiming{30, 60, 40, 20, 2, 5}));
  EXPECT_EQ(harness::FormatTimeSplit(TwoTimedCells()),
            "Time in 2 cells (the children's wall 0.1 s, summed): start 0.0 s, load 0.1 s, "
            "steps 0.0 s, exit 0.0 s, judge 0.0 s, store 0.0 s\n");
  EXPECT_EQ(harness::FormatCellTiming(TwoTimedCells().cells[1]),
            "synthetic:tiny classic cpu-t2: 50.0 ms = start 20.0 + steps 20.0 + exit 10.0; "
            "judge 1.0, store 3.0 ms\n");
  harness::RunResult stored;
  stored.cells = {TwoTimedCells().cells[2]};
  EXPECT_EQ(harness::FormatTimeSplit(stored), "") << "a stored run has no split to show";
}

TEST(TimeSplit, TheJsonReportCarriesEachCellsSplitAndTheTotal) {
  std::ostringstream out;
  harness::report::WriteReport(TwoTimedCells(), "json", out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["timing"]["cells"], 2);
  EXPECT_EQ(j["timing"]["load_ms"], 60.0);
  EXPECT_EQ(j["cells"][0]["timing"]["start_ms"], 10.0);
  EXPECT_FALSE(j["cells"][1]["timing"].contains("load_ms")) << "not measured: left out";
  EXPECT_FALSE(j["cells"][2].contains("timing")) << "a stored cell has no split";
}

}  // namespace
}  // namespace samebits::runner
