// Cells in shared children (harness/runner/shared_child.h): every cell is
// judged as a child of its own would judge it, a fault is kept to its own
// cell, and the cells after a fault run in a fresh child. The fake engine's
// serve mode (fake_engine_main.cc) misbehaves on request and says in its
// hello how many cells its process served before ("-O0 served 2").
#include "harness/runner/shared_child.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "harness/runner/cell_runner.h"
#include "harness/runner/matrix_run.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::CellResult;
using harness::ResultCode;
using harness::testing::FakeEngine;

Cell FakeCell(const std::string& mode, const std::string& scenario = "classic") {
  Cell cell;
  cell.checkpoint = "fake:" + mode;
  cell.scenario = scenario;
  cell.scenario_file = "/nonexistent/" + scenario + ".json";
  cell.config.name = "cpu-t2";
  cell.config.threads = 2;
  return cell;
}

RunnerOptions FakeOptions(int cells_per_child, double timeout = 20) {
  RunnerOptions options;
  options.own_profile = samebits::harness::testing::OwnProfile().get();
  options.engine = FakeEngine();
  options.timeout_seconds = timeout;
  options.cells_per_child = cells_per_child;
  return options;
}

// Returns the results of `cells` run through shared children, checking that
// each cell is reported started and finished once.
std::vector<CellResult> RunShared(const std::vector<Cell>& cells, const RunnerOptions& options) {
  std::vector<size_t> group;
  for (size_t i = 0; i < cells.size(); ++i) group.push_back(i);
  std::vector<CellResult> results(cells.size());
  std::vector<int> started(cells.size(), 0), finished(cells.size(), 0);
  GroupProgress progress;
  progress.started = [&](size_t i) { ++started[i]; };
  progress.finished = [&](size_t i, CellResult r) {
    ++finished[i];
    results[i] = std::move(r);
  };
  harness::MachineInfo platform;
  RunCellsShared(cells, group, options, &platform, progress);
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(finished[i], 1) << cells[i].checkpoint;
    EXPECT_GE(started[i], 1) << cells[i].checkpoint;
  }
  return results;
}

// Returns how many cells the child had served before this one ("-O0 served
// N"), or -1 when it ran in a child of its own ("-O0").
int ServedBefore(const CellResult& r) {
  if (!r.build) return -2;
  const std::string& flags = r.build->flags;
  const std::string prefix = "-O0 served ";
  return flags.rfind(prefix, 0) == 0 ? std::stoi(flags.substr(prefix.size())) : -1;
}

TEST(SharedChild, CellsShareAChildUpToTheLimit) {
  std::vector<Cell> cells;
  for (const char* s : {"a", "b", "c", "d", "e"}) cells.push_back(FakeCell("ok", s));
  const std::vector<CellResult> results = RunShared(cells, FakeOptions(2));
  std::vector<int> served;
  for (const CellResult& r : results) {
    EXPECT_EQ(r.code, ResultCode::kPass) << r.message;
    EXPECT_EQ(r.steps.size(), 5u);
    served.push_back(ServedBefore(r));
  }
  EXPECT_EQ(served, (std::vector<int>{0, 1, 0, 1, 0}));
}

TEST(SharedChild, ACellRunsTheSameSharedOrAlone) {
  // One configuration (libm), in which libm-other reports another library.
  std::vector<Cell> cells = {FakeCell("ok", "a"), FakeCell("ok", "b"), FakeCell("libm-other")};
  for (Cell& c : cells) {
    c.config.name = "cpu-t2-libm";
    c.config.math = "libm";
  }
  const std::vector<CellResult> shared = RunShared(cells, FakeOptions(8));
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellResult alone = RunCell(cells[i], FakeOptions(1));
    ASSERT_EQ(shared[i].code, ResultCode::kPass) << shared[i].message;
    EXPECT_EQ(shared[i].steps, alone.steps) << cells[i].checkpoint;
    ASSERT_TRUE(shared[i].math && alone.math);
    EXPECT_EQ(shared[i].math->name, alone.math->name);
    EXPECT_EQ(shared[i].math->fingerprint, alone.math->fingerprint);
    EXPECT_EQ(ServedBefore(shared[i]), static_cast<int>(i));
    EXPECT_EQ(ServedBefore(alone), -1);
  }
}

// Each faulty cell gets the verdict and message its own child gives it;
// every well-behaved cell passes; a cell after a fault that ended or broke
// the child runs in a fresh child, and a cell that only failed its own
// check (a lie about the configuration) does not end the child.
TEST(SharedChild, EachFaultIsKeptToItsCell) {
  const std::vector<std::string> modes = {
      "ok", "crash",   "ok", "garbage",     "ok", "error-says-unsupported",
      "ok", "no-done", "ok", "exit3",       "ok", "trailing-garbage",
      "ok", "lie",     "ok", "unsupported", "ok", "nonexistent",
      "ok", "hang",    "ok"};
  std::vector<Cell> cells;
  for (size_t i = 0; i < modes.size(); ++i) {
    cells.push_back(FakeCell(modes[i], "s" + std::to_string(i)));
  }
  const std::vector<CellResult> shared = RunShared(cells, FakeOptions(64, /*timeout=*/3));
  for (size_t i = 0; i < modes.size(); ++i) {
    SCOPED_TRACE(modes[i] + " (cell " + std::to_string(i) + ")");
    const CellResult alone = RunCell(cells[i], FakeOptions(1, /*timeout=*/3));
    EXPECT_EQ(shared[i].code, alone.code) << shared[i].message << " / " << alone.message;
    if (modes[i] != "hang") {
      EXPECT_EQ(shared[i].message, alone.message);
    }
    EXPECT_EQ(shared[i].steps, alone.steps);
    if (modes[i] == "ok") {
      EXPECT_EQ(shared[i].code, ResultCode::kPass) << shared[i].message;
    }
  }
  EXPECT_EQ(shared[19].code, ResultCode::kTimeout);
  // The first cell opened the first child; a cell after a fault that ended
  // the child (or whose end was in doubt, run again alone) is a fresh
  // child's first, or ran alone.
  EXPECT_EQ(ServedBefore(shared[0]), 0);
  for (size_t after_fault : {2, 4, 6, 8, 10, 12, 18, 20}) {
    EXPECT_LE(ServedBefore(shared[after_fault]), 0) << "cell " << after_fault;
  }
  // A lie fails its own cell only; the child goes on.
  EXPECT_EQ(shared[13].code, ResultCode::kUnresolved);
  EXPECT_EQ(ServedBefore(shared[14]), ServedBefore(shared[13]) + 1);
  // A child that exited right after a `done` cannot say whose the exit was:
  // the cell before it ran again alone, and so did the one sent after.
  EXPECT_EQ(ServedBefore(shared[9]), -1);
  EXPECT_EQ(ServedBefore(shared[10]), -1);
}

TEST(SharedChild, AProcessLeftBehindSendsEveryCellOfItsChildToAChildOfItsOwn) {
  const std::vector<Cell> cells = {FakeCell("ok", "a"), FakeCell("leave-behind", "b"),
                                   FakeCell("ok", "c")};
  const std::vector<CellResult> shared = RunShared(cells, FakeOptions(8));
  for (size_t i = 0; i < cells.size(); ++i) {
    const CellResult alone = RunCell(cells[i], FakeOptions(1));
    EXPECT_EQ(shared[i].code, alone.code) << shared[i].message;
    EXPECT_EQ(ServedBefore(shared[i]), -1) << "cell " << i;
  }
  EXPECT_EQ(shared[0].code, ResultCode::kPass);
  EXPECT_EQ(shared[1].code, ResultCode::kUnresolved);
  EXPECT_NE(shared[1].message.find("left running"), std::string::npos) << shared[1].message;
  EXPECT_EQ(shared[2].code, ResultCode::kPass);
}

TEST(SharedChild, TheChildsStartAndExitAreItsFirstAndLastCells) {
  std::vector<Cell> cells;
  for (const char* s : {"a", "b", "c"}) cells.push_back(FakeCell("ok", s));
  const std::vector<CellResult> results = RunShared(cells, FakeOptions(8));
  for (const CellResult& r : results) {
    ASSERT_EQ(r.code, ResultCode::kPass);
    // The split adds up to the cell's share of the child's wall time (the
    // fake engine reports no load: -1, not measured).
    EXPECT_EQ(r.timing.load_ms, -1);
    EXPECT_NEAR(r.timing.start_ms + r.timing.steps_ms + r.timing.exit_ms, r.elapsed_ms, 1e-6);
  }
  // The child's exit (its input closed, its end awaited) is the last
  // cell's: it is measured there and nowhere else.
  EXPECT_GE(results[2].timing.exit_ms, 0);
  EXPECT_LT(results[0].timing.exit_ms, results[0].elapsed_ms);
}

TEST(SharedChild, GroupsAreOneConfigurationsCellsCostliestFirst) {
  std::vector<Cell> cells;
  for (const char* config : {"cpu-t1", "cpu-t2"}) {
    for (const char* s : {"a", "b", "c"}) {
      Cell c = FakeCell("ok", s);
      c.config.name = config;
      cells.push_back(c);
    }
  }
  cells.push_back(FakeCell("ok", "x"));
  cells.back().config.name = "cpu-neon";
  cells.back().supported = false;
  cells[0].checkpoint = "synthetic:wide";  // the costliest cell
  const std::vector<std::vector<size_t>> groups = CellGroups(cells, 2);
  EXPECT_EQ(groups, (std::vector<std::vector<size_t>>{{0, 1}, {3, 4}, {2}, {5}, {6}}));
  // One cell a child: each alone, in StartOrder.
  const std::vector<std::vector<size_t>> alone = CellGroups(cells, 1);
  ASSERT_EQ(alone.size(), cells.size());
  EXPECT_EQ(alone.front(), std::vector<size_t>{0});
}

}  // namespace
}  // namespace samebits::runner
