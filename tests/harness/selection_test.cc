// Which cells a run makes (harness/runner/selection.h) and the refusal of a
// selection the engine would not run (harness/runner/matrix_run.h), tested
// without the program: these used to live in harness/cli.
#include "harness/runner/selection.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/runner/matrix.h"
#include "harness/runner/matrix_run.h"
#include "harness/runner/run_error.h"
#include "harness/runner/scenario_identity.h"
#include "harness/store/dump_paths.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/own_profile.h"

namespace samebits::runner {
namespace {

using harness::testing::TempDir;
using harness::testing::WriteFile;

// A project: two scenarios, and a default suite pairing a file checkpoint
// with a scenario of its own.
class SelectionTest : public ::testing::Test {
 protected:
  SelectionTest() {
    WriteFile(dir_.File("scenarios/classic.json"), "{}\n");
    WriteFile(dir_.File("scenarios/long.json"), "{}\n");
    WriteFile(dir_.File("scenarios/real/story.json"), "{}\n");
    WriteFile(dir_.File("scenarios/real/suite.json"),
              R"({"pairs": [{"checkpoint": "gguf:../../w.gguf", "scenarios": ["story"]}]})");
    WriteFile(dir_.File("w.gguf"), "x");
    selection_.root = dir_.path();
    selection_.project_scenarios = dir_.File("scenarios");
    selection_.own_profile = harness::testing::OwnProfile();
    selection_.configs = {"reference"};
  }
  std::vector<std::string> Labels() {
    std::vector<std::string> out;
    for (const Cell& c : SelectCells(selection_)) out.push_back(c.checkpoint + " " + c.scenario);
    return out;
  }
  TempDir dir_;
  Selection selection_;
};

TEST_F(SelectionTest, NoSelectionRunsTheSyntheticMatrixThenTheDefaultSuite) {
  const std::vector<std::string> labels = Labels();
  // Every default synthetic checkpoint x two scenarios, then the one pair.
  ASSERT_EQ(labels.size(), harness::testing::OwnProfile()->matrix_checkpoints.size() * 2u + 1u);
  EXPECT_EQ(labels.front(), "synthetic:tiny classic");
  EXPECT_EQ(labels.back(), "gguf:w.gguf story");
  EXPECT_EQ(DefaultSuitePath(selection_), dir_.File("scenarios/real/suite.json"));
}

// Results are stored and referenced by the scenario's name. The matrix
// refuses two files of one name among its own scenarios (matrix.cc); the
// default selection adds the suite's, from another folder: a different
// file named like a matrix scenario is refused, naming both, while the same
// bytes in two folders are one scenario. Each cell carries its file's
// content hash.
TEST_F(SelectionTest, TwoDifferentScenariosUnderOneNameAreRefused) {
  WriteFile(dir_.File("scenarios/real/classic.json"), "{}\n");
  WriteFile(dir_.File("scenarios/real/suite.json"),
            R"({"pairs": [{"checkpoint": "gguf:../../w.gguf", "scenarios": ["classic"]}]})");
  const std::vector<Cell> cells = SelectCells(selection_);
  ASSERT_FALSE(cells.empty());
  EXPECT_EQ(cells.back().scenario_file, dir_.File("scenarios/real/classic.json"));
  EXPECT_EQ(cells.back().scenario_xxh3.size(), 16u);
  EXPECT_EQ(cells.front().scenario_xxh3, cells.back().scenario_xxh3);
  EXPECT_EQ(cells.back().scenario_xxh3, ScenarioContentHash(dir_.File("scenarios/classic.json")));

  WriteFile(dir_.File("scenarios/real/classic.json"), "{\"steps\": 3}\n");
  try {
    SelectCells(selection_);
    FAIL() << "two different scenarios named classic were accepted";
  } catch (const RunError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("two different scenarios are named 'classic'"), std::string::npos) << what;
    EXPECT_NE(what.find(dir_.File("scenarios/real/classic.json")), std::string::npos) << what;
  }
}

TEST_F(SelectionTest, ACheckpointTheDefaultSuiteListsSelectsItsPairs) {
  // A --checkpoint path is relative to the working folder: give it whole.
  selection_.checkpoints = {"gguf:" + dir_.File("w.gguf")};
  EXPECT_EQ(Labels(), std::vector<std::string>{"gguf:w.gguf story"});
  // A checkpoint the suite does not list runs the folder's matrix.
  selection_.checkpoints = {"synthetic:tiny"};
  selection_.scenarios = {"classic"};
  EXPECT_EQ(Labels(), std::vector<std::string>{"synthetic:tiny classic"});
  // Both: the matrix, then the suite's pairs.
  selection_.checkpoints = {"synthetic:tiny", "gguf:" + dir_.File("w.gguf")};
  selection_.scenarios = {};
  EXPECT_EQ(Labels(), (std::vector<std::string>{"synthetic:tiny classic", "synthetic:tiny long",
                                                "gguf:w.gguf story"}));
}

TEST_F(SelectionTest, UnrunnableSelectionsAreRunErrorsNamingWhatIsKnown) {
  selection_.scenarios = {"nomatch"};
  try {
    Labels();
    FAIL() << "no error";
  } catch (const RunError& e) {
    EXPECT_NE(std::string(e.what()).find("no scenario named 'nomatch'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("known: classic, long"), std::string::npos) << e.what();
  }
  selection_.scenarios = {};
  selection_.configs = {"cpu-t99-fast"};  // a name the profile's grammar does not read
  EXPECT_THROW(Labels(), RunError);       // from the matrix expansion
  selection_.configs = {"reference"};
  selection_.suite = dir_.File("no-such-suite.json");
  EXPECT_THROW(Labels(), RunError);  // from loading the suite
}

TEST_F(SelectionTest, AStoredCellIsFoundInTheSelectionOrInTheScenariosFolder) {
  const std::vector<Cell> selected = SelectCells(selection_);
  harness::CellResult stored;
  stored.checkpoint = "gguf:w.gguf";
  stored.scenario = "story";
  stored.config.name = "reference";
  EXPECT_EQ(CellForResult(stored, selection_, selected).engine_checkpoint,
            "gguf:" + dir_.File("w.gguf"));
  stored.checkpoint = "synthetic:other";
  stored.scenario = "long";
  EXPECT_EQ(CellForResult(stored, selection_, selected).scenario_file,
            dir_.File("scenarios/long.json"));
}

harness::CellResult Refused(const std::string& checkpoint) {
  harness::CellResult c;
  c.checkpoint = checkpoint;
  c.code = harness::ResultCode::kUnresolved;
  c.exit_code = 2;
  c.message = "no such checkpoint " + checkpoint;
  return c;
}

TEST(RefuseUnrunnableSelection, RefusesWhenTheEngineRefusedEveryCellOfACheckpoint) {
  harness::RunResult run;
  run.cells = {Refused("a"), Refused("a")};
  EXPECT_THROW(RefuseUnrunnableSelection(run), RunError);
  // A cell that ran makes the checkpoint runnable (negative control).
  run.cells[1].code = harness::ResultCode::kPass;
  run.cells[1].exit_code = 0;
  EXPECT_NO_THROW(RefuseUnrunnableSelection(run));
  // A crash (a signal) is a failed check, not a refusal.
  run.cells = {Refused("a")};
  run.cells[0].signal = 11;
  EXPECT_NO_THROW(RefuseUnrunnableSelection(run));
  // UNSUPPORTED cells are not counted.
  run.cells = {Refused("b")};
  run.cells[0].code = harness::ResultCode::kUnsupported;
  EXPECT_NO_THROW(RefuseUnrunnableSelection(run));
}

TEST(StoredDumpPath, IsRelativeBelowTheRootElseAbsolute) {
  EXPECT_EQ(store::StoredDumpPath("/p/root/.samebits/dumps/x.f32", "/p/root"),
            ".samebits/dumps/x.f32");
  EXPECT_EQ(store::StoredDumpPath("/elsewhere/x.f32", "/p/root"), "/elsewhere/x.f32");
  EXPECT_EQ(store::StoredDumpPath("", "/p/root"), "");
}

}  // namespace
}  // namespace samebits::runner
