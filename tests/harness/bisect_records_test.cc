// What `samebits bisect` keeps in the store (harness/store/bisect_records.h):
// the version-5 migration of an older database, bisect rows and steps, and
// that runs a bisect made are never taken for the user's gate.
#include "harness/store/bisect_records.h"

#include <gtest/gtest.h>

#include "harness/store/schema.h"
#include "harness/store/sqlite.h"
#include "tests/harness/harness_test_util.h"

namespace samebits::store {
namespace {

using harness::RunResult;
using harness::testing::MakeCell;
using harness::testing::TempDir;

RunResult DivergingRun() {
  RunResult run;
  run.started_at = "2026-11-30T10:00:00Z";
  run.machine.arch = "x86_64";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t2", 8));
  run.cells[1].code = harness::ResultCode::kFail;
  run.diagnosis.kind = harness::Diagnosis::Kind::kIdentityBroken;
  harness::Divergence d;
  d.checkpoint = "synthetic:tiny";
  d.scenario = "classic";
  d.config_a = "reference";
  d.config_b = "cpu-t2";
  d.step_index = 0;
  d.kind = "prefill";
  run.diagnosis.divergences.push_back(d);
  return run;
}

RunResult AgreeingRun(const std::string& revision) {
  RunResult run;
  run.started_at = "2026-11-30T09:00:00Z";
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  run.cells[0].build->revision = revision;
  run.diagnosis.kind = harness::Diagnosis::Kind::kAllAgree;
  return run;
}

TEST(BisectRecords, MigratesAVersionFourDatabaseKeepingItsRuns) {
  TempDir dir;
  const std::string path = dir.File("v4.db");
  {
    SqliteConnection db(path, true);
    Migrate(db, 4);
    ASSERT_EQ(SchemaVersion(db), 4);
    db.Exec(
        "INSERT INTO runs (id, started_at, elapsed_ms, machine_id, status, "
        "cell_count, "
        "diagnosis_kind, diagnosis_headline, command) VALUES (1, "
        "'2026-11-29T00:00:00Z', 5, "
        "NULL, 'FAIL', 0, 'identity-broken', 'cpu-t3 differs', 'samebits "
        "gate');");
    EXPECT_THROW(db.Exec("SELECT * FROM bisects"), StoreError);
  }
  Store store(path);
  EXPECT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  EXPECT_GE(CurrentSchemaVersion(), 5);
  EXPECT_EQ(store.LoadRun(1).diagnosis.headline, "cpu-t3 differs");
  const int64_t id = StartBisect(
      store, {"2026-11-30T00:00:00Z", "/repo", "aaa", "bbb", "samebits bisect", "running"});
  EXPECT_GT(id, 0);
}

TEST(BisectRecords, StepsRoundTripAndBisectRunsAreNotTheUsersGate) {
  TempDir dir;
  Store store(dir.File("s.db"));
  EXPECT_EQ(LatestDivergingRun(store), 0);
  EXPECT_FALSE(LatestAgreeingRevision(store).has_value());

  const int64_t gate = store.SaveRun(DivergingRun());
  const int64_t agreed = store.SaveRun(AgreeingRun("1111111111111111111111111111111111111111"));
  EXPECT_EQ(LatestDivergingRun(store), gate);
  EXPECT_EQ(LatestAgreeingRevision(store), "1111111111111111111111111111111111111111");

  const int64_t bisect =
      StartBisect(store, {"2026-11-30T11:00:00Z", "/repo", "good", "bad", "cmd", "running"});
  // Runs the bisect made: a newer diverging one and a newer agreeing one.
  const int64_t step_run = store.SaveRun(DivergingRun());
  BisectStepRecord timed{"c1", "t1", "bad-end", "bad", step_run, "differs"};
  timed.build_ms = 9876.5;
  timed.run_ms = 1234.25;
  timed.judge_ms = 12.5;
  AddBisectStep(store, bisect, timed);
  AddBisectStep(store, bisect, {"c2", "t2", "step", "skip", 0, "does not build"});
  const int64_t agreeing_step =
      store.SaveRun(AgreeingRun("2222222222222222222222222222222222222222"));
  AddBisectStep(store, bisect, {"c3", "t3", "step", "good", agreeing_step, "agrees"});
  FinishBisect(store, bisect, "found", "c1", "summary", 12.5);

  EXPECT_EQ(LatestDivergingRun(store), gate);  // not the bisect's run
  EXPECT_EQ(LatestAgreeingRevision(store), "1111111111111111111111111111111111111111");
  const std::vector<BisectStepRecord> steps = LoadBisectSteps(store, bisect);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].revision, "c1");
  EXPECT_EQ(steps[0].run_id, step_run);
  EXPECT_EQ(steps[0].build_ms, 9876.5);
  EXPECT_EQ(steps[0].run_ms, 1234.25);
  EXPECT_EQ(steps[0].judge_ms, 12.5);
  EXPECT_EQ(steps[1].run_id, 0);
  EXPECT_EQ(steps[1].verdict, "skip");
  EXPECT_EQ(steps[1].run_ms, -1);  // not measured
  EXPECT_EQ(steps[2].role, "step");
  Statement row = store.connection().Prepare("SELECT status, culprit FROM bisects WHERE id = ?");
  row.Bind(1, bisect);
  ASSERT_TRUE(row.Step());
  EXPECT_EQ(row.Text(0), "found");
  EXPECT_EQ(row.Text(1), "c1");
  (void)agreed;
}

}  // namespace
}  // namespace samebits::store
