// `samebits history`: one cell's outputs over the stored runs
// (analysis/cell_history.h, Store::CellHistory, cli/history_command.cc).
#include "harness/analysis/cell_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/store/store.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/store_backends.h"

namespace samebits::harness {
namespace {

using ::testing::HasSubstr;
using testing::MakeCell;
using ::testing::Not;
using testing::RunShellLine;
using testing::SamebitsProgram;

constexpr const char* kOldRevision = "1111111111111111111111111111111111111111";
constexpr const char* kNewRevision = "2222222222222222222222222222222222222222";

// A sighting of synthetic:tiny/classic/cpu-t2 in run `run_id`, whose steps
// come from `seed` (equal seeds: equal outputs), built at `revision`.
CellSighting Sighting(int64_t run_id, uint64_t seed, const std::string& revision,
                      const std::string& machine = "host-a") {
  CellSighting s;
  s.run_id = run_id;
  s.started_at = "2026-12-0" + std::to_string(run_id) + "T10:00:00Z";
  s.machine_name = machine;
  s.cell = MakeCell("synthetic:tiny", "classic", "cpu-t2", seed);
  s.cell.build->revision = revision;
  return s;
}

const CellKey kKey{"synthetic:tiny", "classic", "cpu-t2"};

TEST(CellKey, TheLastTwoSlashesSplitItSoACheckpointMayBeAPath) {
  const CellKey key = ParseCellKey("gguf:/data/models/q4.gguf/long/cpu-t4-int8");
  EXPECT_EQ(key.checkpoint, "gguf:/data/models/q4.gguf");
  EXPECT_EQ(key.scenario, "long");
  EXPECT_EQ(key.config, "cpu-t4-int8");
  for (const char* bad : {"synthetic:tiny", "classic/cpu-t2", "/classic/cpu-t2",
                          "synthetic:tiny//cpu-t2", "synthetic:tiny/classic/", "/"}) {
    EXPECT_THROW(ParseCellKey(bad), std::invalid_argument) << bad;
  }
}

TEST(CellHistory, ABuildThatChangedTheOutputIsNamedWithTheBisectThatFindsIt) {
  // Newest first, as the store returns them.
  const CellHistory history =
      TraceCellHistory(kKey, {Sighting(4, 8, kNewRevision), Sighting(3, 8, kNewRevision),
                              Sighting(2, 7, kOldRevision), Sighting(1, 7, kOldRevision)});
  ASSERT_EQ(history.entries.size(), 4u);
  EXPECT_EQ(history.entries[0].sighting.run_id, 1);  // oldest first
  EXPECT_EQ(history.outputs, 2);
  EXPECT_EQ(history.entries[1].output, 0);
  EXPECT_EQ(history.entries[2].output, 1);
  ASSERT_TRUE(history.last_change.has_value());
  EXPECT_EQ(*history.last_change, 2u);
  // MakeStep's hashes depend on the seed from step 0 on.
  EXPECT_EQ(history.entries[2].first_differing_step, 0);
  EXPECT_FALSE(history.entries[3].first_differing_step.has_value());
  EXPECT_THAT(history.entries[2].changed,
              ::testing::ElementsAre("build 111111111111 -> 222222222222"));

  const std::string text = FormatCellHistory(history, "samebits");
  EXPECT_THAT(text, HasSubstr("4 stored runs, oldest first; 2 distinct outputs"));
  EXPECT_THAT(text, HasSubstr("since when: output B since run 3 (2026-12-03T10:00:00Z, build "
                              "222222222222); run 2 before it (build 111111111111) gave output A"));
  EXPECT_THAT(text, HasSubstr(std::string("samebits bisect --good ") + kOldRevision + " --bad " +
                              kNewRevision +
                              " --checkpoint synthetic:tiny --scenario classic --config cpu-t2"));
}

TEST(CellHistory, TheFirstDifferingStepIsFoundPastEqualOnes) {
  CellSighting later = Sighting(2, 7, kNewRevision);
  later.cell.steps[2].xxh3_64 ^= 1;  // one bit of step 2's logits
  const CellHistory history = TraceCellHistory(kKey, {later, Sighting(1, 7, kOldRevision)});
  EXPECT_EQ(history.outputs, 2);
  EXPECT_EQ(history.entries[1].first_differing_step, 2);

  // One output a prefix of the other: they differ where the shorter ends.
  CellSighting shorter = Sighting(2, 7, kOldRevision);
  shorter.cell.steps.pop_back();
  const CellHistory cut = TraceCellHistory(kKey, {shorter, Sighting(1, 7, kOldRevision)});
  EXPECT_EQ(cut.entries[1].first_differing_step, 3);
}

TEST(CellHistory, TwoOutputsFromOneBuildOnOneMachineAreNondeterminismNotARegression) {
  const CellHistory history =
      TraceCellHistory(kKey, {Sighting(2, 8, kOldRevision), Sighting(1, 7, kOldRevision)});
  EXPECT_TRUE(history.entries[1].changed.empty());
  const std::string text = FormatCellHistory(history, "samebits");
  EXPECT_THAT(text, HasSubstr("changed: nothing recorded changed"));
  EXPECT_THAT(text, HasSubstr("the engine is not deterministic here"));
  EXPECT_THAT(text, Not(HasSubstr("bisect --good")));
}

TEST(CellHistory, AChangeThatCameWithAnotherMachineOrMathLibraryIsNoCommitToBisect) {
  CellSighting other = Sighting(2, 8, kOldRevision, "host-b");
  other.cell.math->version = "2.37";
  const CellHistory history = TraceCellHistory(kKey, {other, Sighting(1, 7, kOldRevision)});
  const std::string text = FormatCellHistory(history, "samebits");
  EXPECT_THAT(text, HasSubstr("math library samebits-portable 1 (00000000000000aa) -> "
                              "samebits-portable 2.37 (00000000000000aa)"));
  EXPECT_THAT(text, HasSubstr("machine host-a -> host-b"));
  EXPECT_THAT(text, HasSubstr("the build did not change: no commit to bisect"));
}

TEST(CellHistory, AnOutputThatComesBackKeepsItsLetterAndTheNewestChangeCounts) {
  const CellHistory history = TraceCellHistory(
      kKey,
      {Sighting(3, 7, kOldRevision), Sighting(2, 8, kNewRevision), Sighting(1, 7, kOldRevision)});
  EXPECT_EQ(history.outputs, 2);
  EXPECT_EQ(history.entries[2].output, 0);
  EXPECT_EQ(history.last_change, 2u);
  EXPECT_THAT(FormatCellHistory(history, "samebits"),
              HasSubstr("since when: output A since run 3"));
}

TEST(CellHistory, ACellThatGaveNoOutputIsItsResultCode) {
  CellSighting crashed = Sighting(2, 7, kOldRevision);
  crashed.cell.steps.clear();
  crashed.cell.code = ResultCode::kUnresolved;
  crashed.cell.message = "killed by signal 11";
  const CellHistory history = TraceCellHistory(kKey, {crashed, Sighting(1, 7, kOldRevision)});
  EXPECT_EQ(history.outputs, 2);
  EXPECT_THAT(FormatCellHistory(history, "samebits"),
              HasSubstr("no output (UNRESOLVED: killed by signal 11)"));
}

TEST(CellHistory, OneOutputThroughoutSaysSinceWhen) {
  const CellHistory history =
      TraceCellHistory(kKey, {Sighting(2, 7, kNewRevision), Sighting(1, 7, kOldRevision)});
  EXPECT_EQ(history.outputs, 1);
  EXPECT_FALSE(history.last_change.has_value());
  EXPECT_THAT(FormatCellHistory(history, "samebits"),
              HasSubstr("since when: every stored run of the cell gave output A, since run 1 "
                        "(2026-12-01T10:00:00Z)"));
}

}  // namespace
}  // namespace samebits::harness

namespace samebits::store {
namespace {

using harness::CellResult;
using harness::RunResult;
using harness::testing::MakeCell;
using ::testing::HasSubstr;

// Saves a run of two cells: cpu-t2 from `seed` built at `revision`, and
// reference (which never changes), on machine `machine`.
int64_t SaveRun(Store& store, uint64_t seed, const std::string& revision,
                const std::string& machine) {
  RunResult run;
  run.started_at = "2026-12-05T10:00:0" + std::to_string(seed % 10) + "Z";
  run.machine.arch = "x86_64";
  run.machine_name = machine;
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 1));
  CellResult cell = MakeCell("synthetic:tiny", "classic", "cpu-t2", seed);
  cell.build->revision = revision;
  run.cells.push_back(cell);
  return store.SaveRun(run);
}

class CellHistoryStore : public testing::StoreBackendTest {};

TEST_P(CellHistoryStore, ReadsOneCellOfEachRunNewestFirstWithItsSteps) {
  Store store(db());
  const int64_t first = SaveRun(store, 7, std::string(40, '1'), "host-a");
  SaveRun(store, 7, std::string(40, '1'), "host-b");
  const int64_t third = SaveRun(store, 8, std::string(40, '2'), "host-a");
  const harness::CellKey key{"synthetic:tiny", "classic", "cpu-t2"};

  const std::vector<harness::CellSighting> all = store.CellHistory(key, 50);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].run_id, third);
  EXPECT_EQ(all[2].run_id, first);
  EXPECT_EQ(all[0].cell.config.name, "cpu-t2");
  EXPECT_EQ(all[0].cell.build->revision, std::string(40, '2'));
  EXPECT_EQ(all[0].machine_name, "host-a");
  ASSERT_EQ(all[0].cell.steps.size(), 4u);
  EXPECT_EQ(all[0].cell.steps[3].xxh3_64, harness::testing::MakeStep(3, 8).xxh3_64);

  EXPECT_EQ(store.CellHistory(key, 1).size(), 1u);  // the limit
  const std::vector<harness::CellSighting> mine = store.CellHistory(key, 50, "host-a");
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[1].run_id, first);
  EXPECT_TRUE(store.CellHistory({"synthetic:tiny", "classic", "cpu-t3"}, 50).empty());
}

// The command over an SQLite store (the query is the one above, on both).
TEST(HistoryCommand, PrintsTheHistoryAndRefusesACellNoRunHolds) {
  const harness::testing::TempDir dir;
  const std::string db = dir.File("runs.db");
  {
    Store store(db);
    SaveRun(store, 7, std::string(40, '1'), "host-a");
    SaveRun(store, 8, std::string(40, '2'), "host-a");
  }
  const std::string program = harness::testing::SamebitsProgram();
  const harness::testing::ShellResult shown = harness::testing::RunShellLine(
      program + " history --cell synthetic:tiny/classic/cpu-t2 --db " + db);
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_THAT(shown.output, HasSubstr("2 stored runs, oldest first; 2 distinct outputs"));
  EXPECT_THAT(shown.output, HasSubstr(" bisect --good " + std::string(40, '1')));

  const harness::testing::ShellResult missing = harness::testing::RunShellLine(
      program + " history --cell synthetic:tiny/classic/cpu-t9 --db " + db);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_THAT(missing.output,
              HasSubstr("no stored run holds the cell synthetic:tiny/classic/cpu-t9"));

  const harness::testing::ShellResult malformed =
      harness::testing::RunShellLine(program + " history --cell cpu-t2 --db " + db);
  EXPECT_EQ(malformed.exit_code, 2) << malformed.output;
  EXPECT_THAT(malformed.output, HasSubstr("is not CHECKPOINT/SCENARIO/CONFIG"));

  const harness::testing::ShellResult nobody = harness::testing::RunShellLine(
      program + " history --cell synthetic:tiny/classic/cpu-t2 --machine host-z --db " + db);
  EXPECT_EQ(nobody.exit_code, 2) << nobody.output;
  EXPECT_THAT(nobody.output, HasSubstr("host-a"));
}

SAMEBITS_ON_BOTH_STORE_BACKENDS(CellHistoryStore);

}  // namespace
}  // namespace samebits::store
