// The run store (harness/store): round trips, schema versions and
// migrations, refusal of foreign files, atomic runs and concurrent writers.
#include "harness/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "harness/analysis/machine_name.h"
#include "harness/store/postgres.h"
#include "harness/store/row_batch.h"
#include "harness/store/schema.h"
#include "harness/store/shard_records.h"
#include "harness/store/sqlite.h"
#include "tests/harness/harness_test_util.h"
#include "tests/harness/store_backends.h"

namespace samebits::store {
namespace {

using harness::CellResult;
using harness::ResultCode;
using harness::RunResult;
using harness::testing::MakeCell;
using harness::testing::ReadFile;
using harness::testing::TempDir;
using harness::testing::WriteFile;

// The tests that hold on both backends run on each (store_backends.h).
class StoreOnBothBackends : public testing::StoreBackendTest {
 protected:
  // Returns a bare connection to this test's store, below Store.
  std::unique_ptr<Connection> OpenBare() {
    if (postgres()) return OpenPostgres(ParseLocation(db()), false);
    return std::make_unique<SqliteConnection>(db(), true);
  }
  // Makes the store an older one: schema `version`, with the rows `sql`
  // inserts (the next Store opened on it migrates it).
  void MakeOldStore(int version, const std::string& sql) {
    std::unique_ptr<Connection> bare = OpenBare();
    Migrate(*bare, version);
    bare->Exec(sql);
  }
};
SAMEBITS_ON_BOTH_STORE_BACKENDS(StoreOnBothBackends);

RunResult SampleRun() {
  RunResult run;
  run.started_at = "2026-11-29T23:00:00Z";
  run.elapsed_ms = 1234.5;
  run.command = "samebits gate --checkpoint 'a b'";
  run.machine.arch = "x86_64";
  run.machine.cpu = "Fake CPU";
  run.machine.os = "Linux";
  run.machine.kernel = "6.1.0";
  run.machine.libc = "glibc 2.36";
  run.machine.isa_features = {"avx2", "fma"};
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "reference", 7));
  run.cells.push_back(MakeCell("synthetic:tiny", "classic", "cpu-t2", 7));
  run.cells[1].config.threads = 2;
  run.cells[1].config.gemv_chunk_bytes = 8192;
  run.cells[1].isa_used = "avx512";
  run.cells[1].scenario_xxh3 = "0123456789abcdef";
  run.cells[1].traces.push_back({11, 0, "attn_norm", 0xfedcba9876543210ULL});
  run.cells[1].traces.push_back({11, -1, "logits", 0x1ULL});
  // A served cell's protocol objects (PROTOCOL.md's hello and done).
  run.cells[1].device = harness::DeviceInfo{"cuda", "NVIDIA H200", "9.0", 132, "580.1", "CUDA 13"};
  run.cells[1].readback = protocol::Readback{"topk", 20};
  run.cells[1].server = R"({"launched":["srv","-m"],"model":{"id":"m"},"url":"unix:/tmp/s.sock"})";
  run.cells[1].repeats = harness::RepeatInfo{8, 2, 3, 5};
  CellResult crashed = MakeCell("synthetic:tiny", "classic", "cpu-t3", 7, 1);
  crashed.code = ResultCode::kUnresolved;
  crashed.signal = 11;
  crashed.exit_code = 0;
  crashed.message = "killed by signal 11";
  crashed.stderr_tail = "line 1\nline 2\n";
  crashed.math.reset();
  crashed.build.reset();
  crashed.weights_xxh3.clear();
  run.cells.push_back(crashed);
  run.diagnosis.kind = harness::Diagnosis::Kind::kChildFailures;
  run.diagnosis.headline = "1 child did not finish";
  return run;
}

void ExpectSameCells(const RunResult& a, const RunResult& b) {
  ASSERT_EQ(a.cells.size(), b.cells.size());
  for (size_t i = 0; i < a.cells.size(); ++i) {
    const CellResult& x = a.cells[i];
    const CellResult& y = b.cells[i];
    EXPECT_EQ(x.checkpoint, y.checkpoint);
    EXPECT_EQ(x.scenario, y.scenario);
    EXPECT_EQ(x.config.name, y.config.name);
    EXPECT_EQ(x.config.kernels, y.config.kernels);
    EXPECT_EQ(x.config.threads, y.config.threads);
    EXPECT_EQ(x.config.isa, y.config.isa);
    EXPECT_EQ(x.config.gemv_chunk_bytes, y.config.gemv_chunk_bytes);
    EXPECT_EQ(x.config.math, y.config.math);
    EXPECT_EQ(x.config.quant_dot, y.config.quant_dot);
    EXPECT_EQ(x.code, y.code);
    EXPECT_EQ(x.exit_code, y.exit_code);
    EXPECT_EQ(x.signal, y.signal);
    EXPECT_EQ(x.message, y.message);
    EXPECT_EQ(x.stderr_tail, y.stderr_tail);
    EXPECT_EQ(x.elapsed_ms, y.elapsed_ms);
    EXPECT_EQ(x.weights_xxh3, y.weights_xxh3);
    EXPECT_EQ(x.isa_used, y.isa_used);
    EXPECT_EQ(x.scenario_xxh3, y.scenario_xxh3);
    EXPECT_EQ(x.device, y.device);
    EXPECT_EQ(x.readback, y.readback);
    EXPECT_EQ(x.server, y.server);
    EXPECT_EQ(x.repeats, y.repeats);
    EXPECT_EQ(x.math.has_value(), y.math.has_value());
    if (x.math && y.math) {
      EXPECT_EQ(x.math->fingerprint, y.math->fingerprint);
    }
    EXPECT_EQ(x.build.has_value(), y.build.has_value());
    if (x.build && y.build) {
      EXPECT_EQ(x.build->revision, y.build->revision);
    }
    ASSERT_EQ(x.steps.size(), y.steps.size());
    for (size_t s = 0; s < x.steps.size(); ++s) {
      EXPECT_EQ(x.steps[s].index, y.steps[s].index);
      EXPECT_EQ(x.steps[s].kind, y.steps[s].kind);
      EXPECT_EQ(x.steps[s].position, y.steps[s].position);
      EXPECT_EQ(x.steps[s].input_token, y.steps[s].input_token);
      EXPECT_EQ(x.steps[s].token, y.steps[s].token);
      EXPECT_EQ(x.steps[s].fnv1a64, y.steps[s].fnv1a64);
      EXPECT_EQ(x.steps[s].xxh3_64, y.steps[s].xxh3_64);
      EXPECT_EQ(x.steps[s].argmax, y.steps[s].argmax);
    }
    ASSERT_EQ(x.traces.size(), y.traces.size());
    for (size_t t = 0; t < x.traces.size(); ++t) {
      EXPECT_EQ(x.traces[t].position, y.traces[t].position);
      EXPECT_EQ(x.traces[t].layer, y.traces[t].layer);
      EXPECT_EQ(x.traces[t].op, y.traces[t].op);
      EXPECT_EQ(x.traces[t].xxh3_64, y.traces[t].xxh3_64);
    }
  }
}

int64_t Count(Connection& db, const std::string& table) {
  Statement s = db.Prepare("SELECT count(*) FROM " + table);
  s.Step();
  return s.Int(0);
}

TEST_P(StoreOnBothBackends, RoundTripKeepsEveryField) {
  // An SQLite store's folders are made on first use.
  const std::string path = postgres() ? db() : dir_.File("sub/dir/samebits.db");
  const RunResult run = SampleRun();
  int64_t id = 0;
  {
    Store store(path);
    id = store.SaveRun(run);
    EXPECT_GT(id, 0);
  }
  Store store(path);
  const RunResult loaded = store.LoadRun(id);
  EXPECT_EQ(loaded.run_id, id);
  EXPECT_EQ(loaded.started_at, run.started_at);
  EXPECT_EQ(loaded.elapsed_ms, run.elapsed_ms);
  EXPECT_EQ(loaded.command, run.command);
  EXPECT_EQ(loaded.machine.cpu, run.machine.cpu);
  EXPECT_EQ(loaded.machine.isa_features, run.machine.isa_features);
  EXPECT_EQ(loaded.diagnosis.kind, run.diagnosis.kind);
  EXPECT_EQ(loaded.diagnosis.headline, run.diagnosis.headline);
  ExpectSameCells(run, loaded);
  EXPECT_EQ(store.LatestRunId(), id);
  const auto runs = store.ListRuns(10);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "FAIL");
  EXPECT_EQ(runs[0].counts.at("PASS"), 2);
  EXPECT_EQ(runs[0].counts.at("UNRESOLVED"), 1);
  EXPECT_THROW(store.LoadRun(id + 100), StoreError);
}

// Step and trace rows are inserted many to a statement (row_batch.h): a
// run with more of them than several statements hold, spread over cells
// that each name another scenario, build or math library, comes back
// whole, each cell with its own identities.
TEST_P(StoreOnBothBackends, ARunLargerThanSeveralBatchesRoundTrips) {
  RunResult run = SampleRun();
  run.cells.clear();
  const int per_statement = 4096 / 20;  // RowBatch's rows for the 20 step columns
  for (int c = 0; c < 4; ++c) {
    CellResult cell = MakeCell("synthetic:tiny", "scenario-" + std::to_string(c % 3),
                               "cpu-t" + std::to_string(c + 1), 100 + c, per_statement + 37 * c,
                               c == 2 ? "libm" : "portable");
    cell.build->revision = std::string(40, static_cast<char>('a' + c % 2));
    for (int t = 0; t < 300 * (c % 2); ++t) {
      cell.traces.push_back({t, t % 5 - 1, "op" + std::to_string(t), 0x9e3779b97f4a7c15ULL * t});
    }
    run.cells.push_back(std::move(cell));
  }
  Store store(db());
  const int64_t id = store.SaveRun(run);
  ExpectSameCells(run, store.LoadRun(id));
  EXPECT_EQ(Count(store.connection(), "steps"), 4 * per_statement + 37 * (0 + 1 + 2 + 3));
  EXPECT_EQ(Count(store.connection(), "traces"), 600);
  EXPECT_EQ(Count(store.connection(), "scenarios"), 3);
  EXPECT_EQ(Count(store.connection(), "builds"), 2);
  EXPECT_EQ(Count(store.connection(), "math_libraries"), 2);
}

// A RowBatch keeps every value's type (integers, doubles, text, NULL) and
// the order the rows were added in, over full statements and a remainder.
TEST_P(StoreOnBothBackends, ARowBatchKeepsEveryValueAndTheOrder) {
  Store store(db());
  Connection& connection = store.connection();
  connection.Exec(connection.AdaptSchema(
      "CREATE TABLE probe (id INTEGER PRIMARY KEY, n INTEGER, x REAL, t TEXT)"));
  const int rows = 2 * RowBatch(connection, "probe", {"n", "x", "t"}).rows_per_statement() + 5;
  {
    RowBatch batch(connection, "probe", {"n", "x", "t"});
    for (int r = 0; r < rows; ++r) {
      batch.AddRow().Bind(1, static_cast<int64_t>(r * int64_t{1000000007})).Bind(2, r + 0.25);
      if (r % 7 == 0) {
        batch.BindNull(3);
      } else {
        batch.Bind(3, "row " + std::to_string(r) + " ' ?1 \"");
      }
    }
    batch.Flush();
  }
  Statement read = connection.Prepare("SELECT n, x, t FROM probe ORDER BY id");
  int r = 0;
  for (; read.Step(); ++r) {
    EXPECT_EQ(read.Int(0), r * int64_t{1000000007});
    EXPECT_EQ(read.Double(1), r + 0.25);
    EXPECT_EQ(read.IsNull(2), r % 7 == 0);
    if (r % 7 != 0) EXPECT_EQ(read.Text(2), "row " + std::to_string(r) + " ' ?1 \"");
  }
  EXPECT_EQ(r, rows);
}

TEST_P(StoreOnBothBackends, HashesAreSixteenHexDigitsForTheDatabaseShell) {
  Store store(db());
  store.SaveRun(SampleRun());
  Statement s = store.connection().Prepare(
      postgres() ? "SELECT xxh3_64, fnv1a64, pg_typeof(xxh3_64)::text FROM steps "
                   "ORDER BY cell_id, "
                   "idx LIMIT 1"
                 : "SELECT xxh3_64, fnv1a64, typeof(xxh3_64) FROM steps LIMIT 1");
  ASSERT_TRUE(s.Step());
  EXPECT_EQ(s.Text(0),
            "0000000000001b58");  // 7 * 1000 + 0, MakeStep's documented pattern.
  EXPECT_EQ(s.Text(1), "ffffffffffffe4a7");
  EXPECT_EQ(s.Text(2), "text");
}

TEST_P(StoreOnBothBackends, IdentitiesAreSharedBetweenRuns) {
  Store store(db());
  store.SaveRun(SampleRun());
  store.SaveRun(SampleRun());
  EXPECT_EQ(Count(store.connection(), "runs"), 2);
  EXPECT_EQ(Count(store.connection(), "machines"), 1);
  EXPECT_EQ(Count(store.connection(), "builds"), 1);
  EXPECT_EQ(Count(store.connection(), "math_libraries"), 1);
  EXPECT_EQ(Count(store.connection(), "checkpoints"), 1);
  EXPECT_EQ(Count(store.connection(), "scenarios"), 1);
  EXPECT_EQ(Count(store.connection(), "cells"), 6);
}

TEST_P(StoreOnBothBackends, NewDatabaseHasTheCurrentSchemaVersionAndWal) {
  Store store(db());
  EXPECT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  EXPECT_GE(CurrentSchemaVersion(), 3);
  if (postgres()) return;  // a server keeps its own journal
  Statement mode = store.connection().Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.Step());
  EXPECT_EQ(mode.Text(0), "wal");
}

TEST(Store, MigratesAVersionOneDatabaseKeepingItsRows) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  {
    SqliteConnection db(path, true);
    Migrate(db, 1);
    ASSERT_EQ(SchemaVersion(db), 1);
    // A run written by a version-1 samebits: no diagnosis columns, no traces
    // table.
    db.Exec(
        "INSERT INTO scenarios (id, name) VALUES (1, 'classic');"
        "INSERT INTO runs (id, started_at, elapsed_ms, machine_id, status, "
        "cell_count) "
        "VALUES (1, '2026-01-01T00:00:00Z', 5, NULL, 'PASS', 1);"
        "INSERT INTO cells (id, run_id, checkpoint, checkpoint_id, "
        "scenario_id, config_name, "
        "kernels, "
        "threads, isa, gemv_chunk_bytes, math, build_id, math_library_id, "
        "code, exit_code, signal, "
        "message, stderr_tail, elapsed_ms) VALUES (1, 1, 'synthetic:tiny', "
        "NULL, 1, 'cpu-t1', "
        "'cpu', 1, "
        "'auto', 0, 'portable', NULL, NULL, 'PASS', 0, 0, '', '', 3);"
        "INSERT INTO steps VALUES (1, 0, 'prefill', 11, 42, 17, "
        "'00000000000000ff', "
        "'0000000000000abc', 17, 0, 0);");
    EXPECT_THROW(db.Exec("SELECT * FROM traces"), StoreError);
  }
  Store store(path);
  EXPECT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  const RunResult old = store.LoadRun(1);
  ASSERT_EQ(old.cells.size(), 1u);
  ASSERT_EQ(old.cells[0].steps.size(), 1u);
  EXPECT_EQ(old.cells[0].steps[0].xxh3_64, 0xabcu);
  EXPECT_EQ(old.cells[0].steps[0].token, 17);
  EXPECT_EQ(old.diagnosis.kind,
            harness::Diagnosis::Kind::kAllAgree);  // the new column's default
  // And the migrated database takes new runs.
  const int64_t id = store.SaveRun(SampleRun());
  ExpectSameCells(SampleRun(), store.LoadRun(id));
}

// Every migration applies on both backends, one at a time as an older
// samebits would have left the store, and the result takes and gives back
// a run.
TEST_P(StoreOnBothBackends, EveryMigrationAppliesStepByStep) {
  {
    std::unique_ptr<Connection> bare = OpenBare();
    for (int v = 1; v <= CurrentSchemaVersion(); ++v) {
      Migrate(*bare, v);
      ASSERT_EQ(SchemaVersion(*bare), v);
    }
  }
  Store store(db());
  const int64_t id = store.SaveRun(SampleRun());
  ExpectSameCells(SampleRun(), store.LoadRun(id));
}

// Runs are named by machine: a run's own name is kept, one without gets
// its machine's described name; runs are listed and found by name.
TEST_P(StoreOnBothBackends, RunsAreNamedAndSelectedByMachine) {
  Store store(db());
  RunResult alpha = SampleRun();
  alpha.machine_name = "alpha";
  RunResult unnamed = SampleRun();
  RunResult beta = SampleRun();
  beta.machine_name = "beta";
  const int64_t a1 = store.SaveRun(alpha);
  const int64_t u = store.SaveRun(unnamed);
  const int64_t a2 = store.SaveRun(alpha);
  const int64_t b = store.SaveRun(beta);
  EXPECT_EQ(store.LoadRun(a1).machine_name, "alpha");
  const std::string described = harness::DescribedMachineName(unnamed.machine);
  EXPECT_EQ(store.LoadRun(u).machine_name, described);
  EXPECT_EQ(store.LatestRunIdOf("alpha"), a2);
  EXPECT_EQ(store.LatestRunIdOf("beta"), b);
  EXPECT_EQ(store.LatestRunIdOf(described), u);
  EXPECT_EQ(store.LatestRunIdOf("gamma"), 0);
  const std::vector<RunSummary> alphas = store.ListRuns(10, "alpha");
  ASSERT_EQ(alphas.size(), 2u);
  EXPECT_EQ(alphas[0].id, a2);
  EXPECT_EQ(alphas[1].id, a1);
  EXPECT_EQ(alphas[0].machine_name, "alpha");
  EXPECT_EQ(store.ListRuns(10).size(), 4u);
  EXPECT_TRUE(store.ListRuns(10, "gamma").empty());
  const std::vector<std::string> names = {"alpha", "beta", described};
  std::vector<std::string> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(store.MachineNames(), sorted);
}

// A sharded gate's runs are stored under their group with their K/N, and
// listed oldest first (a retried shard twice); groups newest first; a run
// saved as a shard is the run SaveRun would have stored, its shard with it.
TEST_P(StoreOnBothBackends, ShardsAreStoredUnderTheirGroup) {
  Store store(db());
  RunResult run = SampleRun();
  const auto save_as = [&](const harness::ShardInfo& shard) {
    RunResult shard_run = run;
    shard_run.shard = shard;
    return store.SaveRun(shard_run);
  };
  const int64_t g1 = save_as({"g", 1, 2});
  const int64_t g2 = save_as({"g", 2, 2});
  const int64_t plain = store.SaveRun(run);
  const int64_t h1 = save_as({"h", 1, 1});
  run.machine_name = "retry";
  const int64_t g2_again = save_as({"g", 2, 2});
  const std::vector<harness::StoredShard> g = ShardsOf(store, "g");
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g[0].run_id, g1);
  EXPECT_EQ(g[0].index, 1);
  EXPECT_EQ(g[0].count, 2);
  EXPECT_EQ(g[1].run_id, g2);
  EXPECT_EQ(g[2].run_id, g2_again);
  EXPECT_EQ(g[2].index, 2);
  EXPECT_EQ(g[2].machine_name, "retry");
  EXPECT_EQ(g[2].started_at, SampleRun().started_at);
  ASSERT_EQ(ShardsOf(store, "h").size(), 1u);
  EXPECT_EQ(ShardsOf(store, "h")[0].run_id, h1);
  EXPECT_TRUE(ShardsOf(store, "nope").empty());
  EXPECT_EQ(ShardGroups(store, 10), (std::vector<std::string>{"g", "h"}));
  EXPECT_EQ(ShardGroups(store, 1), (std::vector<std::string>{"g"}));
  ExpectSameCells(SampleRun(), store.LoadRun(g1));
  const std::optional<harness::ShardInfo> loaded = store.LoadRun(g2_again).shard;
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->group, "g");
  EXPECT_EQ(loaded->index, 2);
  EXPECT_EQ(loaded->count, 2);
  EXPECT_FALSE(store.LoadRun(plain).shard.has_value());
}

// A version-12 store's runs are named after the machine each recorded
// (version 13 fills them), on both backends; a run without a machine row
// gets the unknown machine's name.
TEST_P(StoreOnBothBackends, MigrationThirteenNamesOldRunsAfterTheirMachines) {
  MakeOldStore(
      12,
      "INSERT INTO machines (arch, cpu, isa_features, os, kernel, libc) VALUES "
      "('aarch64', 'implementer 0x41 part 0xd0c', 'neon asimd', 'Linux', '6.1', 'glibc 2.36');"
      "INSERT INTO runs (started_at, elapsed_ms, machine_id, status, cell_count) "
      "SELECT '2026-11-29T00:00:00Z', 5, id, 'PASS', 0 FROM machines;"
      "INSERT INTO runs (started_at, elapsed_ms, machine_id, status, cell_count) "
      "VALUES ('2026-11-29T00:00:01Z', 5, NULL, 'UNCHECKED', 0);");
  Store store(db());
  ASSERT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  harness::MachineInfo arm;
  arm.arch = "aarch64";
  arm.cpu = "implementer 0x41 part 0xd0c";
  arm.isa_features = {"neon", "asimd"};
  const std::vector<RunSummary> runs = store.ListRuns(10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].machine_name, harness::DescribedMachineName(arm));
  EXPECT_EQ(runs[0].machine_name, harness::DescribedMachineName(harness::MachineInfo{}));
  EXPECT_EQ(store.LoadRun(runs[1].id).machine_name, harness::DescribedMachineName(arm));
}

// A cell's dot-product profile is kept (an int8 cell reads back int8), and
// the cells of a store made before there was one (version 15) read back as
// exact, which is what their engines ran.
TEST_P(StoreOnBothBackends, TheQuantDotProfileIsKeptAndOlderCellsAreExact) {
  MakeOldStore(
      15,
      "INSERT INTO scenarios (name) VALUES ('classic');"
      "INSERT INTO runs (started_at, elapsed_ms, machine_id, status, cell_count) "
      "VALUES ('2026-11-29T00:00:00Z', 5, NULL, 'PASS', 1);"
      "INSERT INTO cells (run_id, checkpoint, scenario_id, config_name, kernels, threads, isa, "
      "gemv_chunk_bytes, math, code, exit_code, signal, message, stderr_tail, elapsed_ms) "
      "SELECT r.id, 'synthetic:tiny-q4_0', s.id, 'cpu-t1', 'cpu', 1, 'auto', 0, 'portable', "
      "'PASS', 0, 0, '', '', 1 FROM runs r, scenarios s;");
  Store store(db());
  const int64_t old_id = store.LatestRunId();
  ASSERT_GT(old_id, 0);
  const RunResult old = store.LoadRun(old_id);
  ASSERT_EQ(old.cells.size(), 1u);
  EXPECT_EQ(old.cells[0].config.quant_dot, "exact");
  RunResult run = SampleRun();
  run.cells[1].config.name = "cpu-t2-int8";
  run.cells[1].config.quant_dot = "int8";
  const int64_t id = store.SaveRun(run);
  const RunResult loaded = store.LoadRun(id);
  ExpectSameCells(run, loaded);
  EXPECT_EQ(loaded.cells[0].config.quant_dot, "exact");
  EXPECT_EQ(loaded.cells[1].config.quant_dot, "int8");
}

// Returns a diagnosis with two detail lines and two divergences, one of
// them without a layer (the NULL column) and one with.
harness::Diagnosis SampleDiagnosis() {
  harness::Diagnosis d;
  d.kind = harness::Diagnosis::Kind::kIdentityBroken;
  d.headline = "cpu-t3 disagrees with reference";
  d.details = {"reference and cpu-t3 first differ at step 3", "rerun with --trace"};
  harness::Divergence a;
  a.checkpoint = "synthetic:tiny";
  a.scenario = "classic";
  a.config_a = "reference";
  a.config_b = "cpu-t3";
  a.step_index = 3;
  a.kind = "decode";
  a.position = 14;
  a.detail = "xxh3_64 0000000000000001 vs 0000000000000002";
  harness::Divergence b = a;
  b.scenario = "long 'quoted'";
  b.layer = 0;  // layer 0 must not read back as "no layer"
  b.op = "ffn_down";
  d.divergences = {a, b};
  return d;
}

void ExpectSameDiagnosis(const harness::Diagnosis& x, const harness::Diagnosis& y) {
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.headline, y.headline);
  EXPECT_EQ(x.details, y.details);
  ASSERT_EQ(x.divergences.size(), y.divergences.size());
  for (size_t i = 0; i < x.divergences.size(); ++i) {
    const harness::Divergence& a = x.divergences[i];
    const harness::Divergence& b = y.divergences[i];
    EXPECT_EQ(a.checkpoint, b.checkpoint);
    EXPECT_EQ(a.scenario, b.scenario);
    EXPECT_EQ(a.config_a, b.config_a);
    EXPECT_EQ(a.config_b, b.config_b);
    EXPECT_EQ(a.step_index, b.step_index);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.position, b.position);
    EXPECT_EQ(a.layer, b.layer);
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.detail, b.detail);
  }
}

TEST_P(StoreOnBothBackends, RoundTripKeepsTheWholeDiagnosis) {
  Store store(db());
  RunResult run = SampleRun();
  run.diagnosis = SampleDiagnosis();
  run.cells[1].dump_path = "dumps/run/cell.f32";
  const int64_t id = store.SaveRun(run);
  const RunResult back = store.LoadRun(id);
  ExpectSameDiagnosis(run.diagnosis, back.diagnosis);
  EXPECT_EQ(back.cells[1].dump_path, "dumps/run/cell.f32");
  // Another run's diagnosis does not leak into this one.
  const int64_t other = store.SaveRun(SampleRun());
  EXPECT_TRUE(store.LoadRun(other).diagnosis.divergences.empty());
  EXPECT_TRUE(store.LoadRun(other).diagnosis.details.empty());
  ExpectSameDiagnosis(run.diagnosis, store.LoadRun(id).diagnosis);
}

TEST(Store, MigratesAVersionThreeDatabaseKeepingItsRows) {
  TempDir dir;
  const std::string path = dir.File("v3.db");
  {
    SqliteConnection db(path, true);
    Migrate(db, 3);
    ASSERT_EQ(SchemaVersion(db), 3);
    // A run written by a version-3 samebits: a diagnosis with its kind and
    // headline only, a cell with a dump path and a resolved ISA.
    db.Exec(
        "INSERT INTO scenarios (id, name) VALUES (1, 'classic');"
        "INSERT INTO runs (id, started_at, elapsed_ms, machine_id, status, "
        "cell_count, "
        "diagnosis_kind, diagnosis_headline, command) VALUES (1, "
        "'2026-11-29T00:00:00Z', 5, "
        "NULL, 'FAIL', 1, 'identity-broken', 'cpu-t3 differs', 'samebits "
        "gate');"
        "INSERT INTO cells (id, run_id, checkpoint, checkpoint_id, "
        "scenario_id, config_name, "
        "kernels, threads, isa, gemv_chunk_bytes, math, build_id, "
        "math_library_id, code, "
        "exit_code, signal, message, stderr_tail, elapsed_ms, dump_path, "
        "isa_used) VALUES (1, 1, "
        "'synthetic:tiny', NULL, 1, 'cpu-t3', 'cpu', 3, 'auto', 0, "
        "'portable', NULL, NULL, "
        "'FAIL', 0, 0, 'step 3', '', 3, 'dumps/x.f32', 'avx2');");
    EXPECT_THROW(db.Exec("SELECT * FROM divergences"), StoreError);
  }
  Store store(path);
  EXPECT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  const RunResult old = store.LoadRun(1);
  EXPECT_EQ(old.diagnosis.kind, harness::Diagnosis::Kind::kIdentityBroken);
  EXPECT_EQ(old.diagnosis.headline, "cpu-t3 differs");
  EXPECT_TRUE(old.diagnosis.details.empty());
  EXPECT_TRUE(old.diagnosis.divergences.empty());
  ASSERT_EQ(old.cells.size(), 1u);
  EXPECT_EQ(old.cells[0].dump_path, "dumps/x.f32");
  EXPECT_EQ(old.cells[0].isa_used, "avx2");
  EXPECT_EQ(old.cells[0].scenario_xxh3, "");  // not recorded then: unknown
  // The migrated database keeps whole diagnoses of new runs, and deleting
  // a run deletes its diagnosis rows.
  RunResult run = SampleRun();
  run.diagnosis = SampleDiagnosis();
  const int64_t id = store.SaveRun(run);
  ExpectSameDiagnosis(run.diagnosis, store.LoadRun(id).diagnosis);
  store.connection().Exec("PRAGMA foreign_keys = ON; DELETE FROM runs WHERE id = " +
                          std::to_string(id));
  EXPECT_EQ(Count(store.connection(), "divergences"), 0);
  EXPECT_EQ(Count(store.connection(), "diagnosis_details"), 0);
}

// A version-8 store (before batched configurations) reads its cells as
// unbatched and its steps without places, and keeps new batched runs whole.
TEST(Store, MigratesAVersionEightDatabaseAndKeepsBatches) {
  TempDir dir;
  const std::string path = dir.File("v8.db");
  {
    SqliteConnection db(path, true);
    Migrate(db, 8);
    ASSERT_EQ(SchemaVersion(db), 8);
    db.Exec(
        "INSERT INTO scenarios (id, name) VALUES (1, 'classic');"
        "INSERT INTO runs (id, started_at, elapsed_ms, machine_id, status, "
        "cell_count, "
        "diagnosis_kind, diagnosis_headline, command) VALUES (1, "
        "'2026-11-29T00:00:00Z', 5, "
        "NULL, 'PASS', 1, 'all-agree', 'agree', 'samebits gate');"
        "INSERT INTO cells (id, run_id, checkpoint, checkpoint_id, "
        "scenario_id, config_name, "
        "kernels, threads, isa, gemv_chunk_bytes, math, build_id, "
        "math_library_id, code, "
        "exit_code, signal, message, stderr_tail, elapsed_ms, dump_path, "
        "isa_used, "
        "engine_checkpoint) VALUES (1, 1, 'synthetic:tiny', NULL, 1, 'cpu-t2', "
        "'cpu', 2, 'auto', "
        "0, 'portable', NULL, NULL, 'PASS', 0, 0, '', '', 3, '', 'avx2', "
        "'synthetic:tiny');"
        "INSERT INTO steps (cell_id, idx, kind, position, input_token, token, "
        "fnv1a64, xxh3_64, "
        "argmax, nan_count, inf_count, text) VALUES (1, 0, 'prefill', 5, 1, 2, "
        "'0000000000000001', '0000000000000002', 2, 0, 0, '');");
    EXPECT_THROW(db.Exec("SELECT batch FROM cells"), StoreError);
  }
  Store store(path);
  EXPECT_EQ(SchemaVersion(store.connection()), CurrentSchemaVersion());
  const RunResult old = store.LoadRun(1);
  ASSERT_EQ(old.cells.size(), 1u);
  EXPECT_EQ(old.cells[0].config.batch, 1);
  EXPECT_EQ(old.cells[0].config.batch_seed, 1u);
  EXPECT_EQ(old.cells[0].config.batch_schedule, "together");
  ASSERT_EQ(old.cells[0].steps.size(), 1u);
  EXPECT_FALSE(old.cells[0].steps[0].batch);

  RunResult run = SampleRun();
  CellResult& batched = run.cells[0];
  batched.config.name = "cpu-t3-b8-staggered-seed5";
  batched.config.batch = 8;
  batched.config.batch_seed = 5;
  batched.config.batch_schedule = "staggered";
  for (harness::StepRecord& st : batched.steps) {
    st.batch = harness::BatchPlace{6, 14, 3, st.index};
  }
  harness::Divergence d;
  d.checkpoint = batched.checkpoint;
  d.scenario = batched.scenario;
  d.config_a = "cpu-t1";
  d.config_b = batched.config.name;
  d.batch_place = "batch 8 staggered, seed 5, slot 3 of 6 sequences, row 1 of 14";
  run.diagnosis.divergences = {d};
  const RunResult loaded = store.LoadRun(store.SaveRun(run));
  const CellResult& back = loaded.cells[0];
  EXPECT_EQ(back.config.batch, 8);
  EXPECT_EQ(back.config.batch_seed, 5u);
  EXPECT_EQ(back.config.batch_schedule, "staggered");
  ASSERT_EQ(back.steps.size(), batched.steps.size());
  for (size_t i = 0; i < back.steps.size(); ++i)
    EXPECT_EQ(back.steps[i].batch, batched.steps[i].batch);
  // Negative control: the unbatched cell beside it has no places.
  for (const harness::StepRecord& st : loaded.cells[1].steps) EXPECT_FALSE(st.batch);
  EXPECT_EQ(loaded.cells[1].config.batch, 1);
  ASSERT_EQ(loaded.diagnosis.divergences.size(), 1u);
  EXPECT_EQ(loaded.diagnosis.divergences[0].batch_place, d.batch_place);
}

TEST_P(StoreOnBothBackends, RefusesADatabaseFromANewerSamebits) {
  const std::string& path = db();
  {
    Store store(path);
    store.connection().Exec("UPDATE schema_version SET version = 99");
  }
  try {
    Store store(path);
    FAIL() << "expected a refusal";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("99"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
}

TEST(Store, RefusesAFileThatIsNotADatabaseAndLeavesItUntouched) {
  TempDir dir;
  const std::string path = dir.File("notes.db");
  const std::string text = "these are my notes, not a database\n" + std::string(5000, 'x');
  WriteFile(path, text);
  try {
    Store store(path);
    FAIL() << "expected a refusal";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not an SQLite database"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ReadFile(path), text);
}

TEST(Store, RefusesADamagedDatabaseAndLeavesItUntouched) {
  TempDir dir;
  const std::string path = dir.File("damaged.db");
  {
    Store store(path);
    store.SaveRun(SampleRun());
  }
  std::string bytes = ReadFile(path);
  ASSERT_GT(bytes.size(), 100u);
  // A right magic but a nonsense page size and header.
  for (size_t i = 16; i < 100; ++i) bytes[i] = static_cast<char>(0xee);
  WriteFile(path, bytes);
  std::remove((path + "-wal").c_str());
  std::remove((path + "-shm").c_str());
  EXPECT_THROW(Store store(path), StoreError);
  EXPECT_EQ(ReadFile(path), bytes);
}

TEST_P(StoreOnBothBackends, RefusesAnotherProgramsDatabase) {
  OpenBare()->Exec("CREATE TABLE photos (id INTEGER)");
  const std::string before = postgres() ? "" : ReadFile(db());
  for (const Access access : {Access::kReadWrite, Access::kRead}) {
    try {
      Store store(db(), access);
      FAIL() << "expected a refusal";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("not a samebits one"), std::string::npos) << e.what();
    }
  }
  if (!postgres()) {
    EXPECT_EQ(ReadFile(db()), before);
  }
  const std::unique_ptr<Connection> bare = OpenBare();
  Statement tables = bare->Prepare(
      postgres()
          ? "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
          : "SELECT count(*) FROM sqlite_master");
  ASSERT_TRUE(tables.Step());
  EXPECT_EQ(tables.Int(0), 1) << "the store made a table in another program's database";
}

// A schema_version that is not a number used to read as 0, so the store
// tried to create its tables again ("table schema_version already exists").
TEST(Store, ANonNumericSchemaVersionIsCalledDamaged) {
  TempDir dir;
  const std::string path = dir.File("odd.db");
  {
    Store store(path);
    store.connection().Exec("UPDATE schema_version SET version = 'four'");
  }
  for (const Access access : {Access::kReadWrite, Access::kRead}) {
    try {
      Store store(path, access);
      FAIL() << "expected a refusal";
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("its schema_version is 'four', not a version number"),
                std::string::npos)
          << e.what();
    }
  }
}

// Opening with Access::kRead writes nothing: not the journal mode of a
// current store, not a byte of another program's database.
TEST_P(StoreOnBothBackends, ReadAccessWritesNothing) {
  const std::string& path = db();
  {
    Store store(path);
    store.SaveRun(SampleRun());
  }
  const std::string before = postgres() ? "" : ReadFile(path);
  {
    Store store(path, Access::kRead);
    EXPECT_EQ(store.ListRuns(10).size(), 1u);
    EXPECT_THROW(store.SaveRun(SampleRun()), StoreError);
  }
  if (!postgres()) {
    EXPECT_EQ(ReadFile(path), before);
  }
  EXPECT_EQ(Store(path).ListRuns(10).size(), 1u);
}

TEST_P(StoreOnBothBackends, AWriterThatFailsMidRunLeavesNoRows) {
  Store store(db());
  store.SaveRun(SampleRun());
  store.after_cell_hook = [](int written) {
    if (written == 2) throw std::runtime_error("the harness dies here");
  };
  EXPECT_THROW(store.SaveRun(SampleRun()), std::runtime_error);
  store.after_cell_hook = nullptr;
  EXPECT_EQ(Count(store.connection(), "runs"), 1);
  EXPECT_EQ(Count(store.connection(), "cells"), 3);
  EXPECT_EQ(Count(store.connection(), "steps"), 4 + 4 + 1);
  EXPECT_EQ(Count(store.connection(), "traces"), 2);
}

TEST_P(StoreOnBothBackends, AProcessKilledMidRunLeavesNoRows) {
  const std::string& path = db();
  Store(path).SaveRun(SampleRun());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child is killed (no unwinding, no rollback) in the middle of the
    // transaction, as a harness killed by the OOM killer or Ctrl-\ would be.
    Store store(path);
    store.after_cell_hook = [](int written) {
      if (written == 2) ::kill(::getpid(), SIGKILL);
    };
    store.SaveRun(SampleRun());
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  Store store(path);
  EXPECT_EQ(Count(store.connection(), "runs"), 1);
  EXPECT_EQ(Count(store.connection(), "cells"), 3);
  EXPECT_EQ(Count(store.connection(), "steps"), 9);
  // The server's lock went with the killed process: the store takes runs.
  const int64_t id = store.SaveRun(SampleRun());
  EXPECT_EQ(Count(store.connection(), "runs"), 2);
  // SQLite reuses the rolled-back id; a PostgreSQL identity never does.
  if (!postgres()) {
    EXPECT_EQ(id, 2);
  }
}

TEST_P(StoreOnBothBackends, FourConcurrentWriterProcessesLoseNothing) {
  const std::string& path = db();
  constexpr int kWriters = 4;
  constexpr int kRunsEach = 15;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        // Every writer opens the database itself, racing to create it.
        Store store(path);
        for (int r = 0; r < kRunsEach; ++r) {
          RunResult run = SampleRun();
          run.command = "writer " + std::to_string(w) + " run " + std::to_string(r);
          store.SaveRun(run);
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        code = 1;
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Store store(path);
  EXPECT_EQ(Count(store.connection(), "runs"), kWriters * kRunsEach);
  EXPECT_EQ(Count(store.connection(), "cells"), kWriters * kRunsEach * 3);
  EXPECT_EQ(Count(store.connection(), "steps"), kWriters * kRunsEach * 9);
  Statement distinct = store.connection().Prepare("SELECT count(DISTINCT command) FROM runs");
  distinct.Step();
  EXPECT_EQ(distinct.Int(0), kWriters * kRunsEach);
  EXPECT_EQ(Count(store.connection(), "machines"), 1);
}

// A process creating the schema must never look, to another opening the
// store at that moment, like another program's database: the census of
// tables is one snapshot (Connection::CountTables). A child creates and
// drops a schema in single transactions for two seconds while this
// process reads the schema version; reading the census in two statements
// saw a half-made schema here 73 times in 16 s on SQLite and 1107 times in
// 10 s on PostgreSQL.
TEST_P(StoreOnBothBackends, AReaderNeverSeesASchemaHalfCreated) {
  std::unique_ptr<Connection> reader = OpenBare();  // creates an SQLite file
  const pid_t toggler = ::fork();
  ASSERT_GE(toggler, 0);
  if (toggler == 0) {
    int code = 0;
    try {
      std::unique_ptr<Connection> writer = OpenBare();
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (std::chrono::steady_clock::now() < until) {
        writer->BeginWrite();
        writer->Exec("CREATE TABLE schema_version (version INTEGER NOT NULL)");
        writer->Exec("INSERT INTO schema_version VALUES (1)");
        writer->Exec("CREATE TABLE runs (id INTEGER)");
        writer->Commit();
        writer->BeginWrite();
        writer->Exec("DROP TABLE runs");
        writer->Exec("DROP TABLE schema_version");
        writer->Commit();
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "toggler: %s\n", e.what());
      code = 1;
    }
    ::_exit(code);
  }
  int readings = 0;
  int half_created = 0;
  int status = 0;
  while (::waitpid(toggler, &status, WNOHANG) == 0) {
    try {
      const int version = SchemaVersion(*reader);
      EXPECT_TRUE(version == 0 || version == 1) << version;
    } catch (const StoreError& e) {
      // A drop between the census and the read of the version is this
      // test's own doing (a store's schema is never dropped); a schema
      // seen half made is the defect.
      if (std::string(e.what()).find("not a samebits one") != std::string::npos) ++half_created;
    }
    ++readings;
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_GT(readings, 0);
  EXPECT_EQ(half_created, 0) << "of " << readings << " readings";
}

}  // namespace
}  // namespace samebits::store
