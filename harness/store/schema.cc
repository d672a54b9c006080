// The store's migrations (schema.h, SCHEMA.md).
#include "harness/store/schema.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "harness/analysis/machine_name.h"
#include "harness/store/connection.h"

namespace samebits::store {
namespace {

// Names every run stored without a machine name after the machine it
// recorded (DescribedMachineName), as version 13 asks: a hash SQL cannot
// compute, so it is done here, in the migration's transaction.
void FillMachineNames(Connection& db) {
  Statement select = db.Prepare(
      "SELECT r.id, m.arch, m.cpu, m.isa_features FROM runs r "
      "LEFT JOIN machines m ON m.id = r.machine_id WHERE r.machine_name = ''");
  std::vector<std::pair<int64_t, std::string>> names;
  while (select.Step()) {
    harness::MachineInfo machine;
    if (!select.IsNull(1)) {
      machine.arch = select.Text(1);
      machine.cpu = select.Text(2);
      std::istringstream features(select.Text(3));
      for (std::string f; features >> f;) machine.isa_features.push_back(f);
    }
    names.emplace_back(select.Int(0), harness::DescribedMachineName(machine));
  }
  Statement update = db.Prepare("UPDATE runs SET machine_name = ?1 WHERE id = ?2");
  for (const auto& [id, name] : names) {
    update.Bind(1, name).Bind(2, id);
    update.Run();
  }
}

// Fills, after the migration to `version`, what its SQL cannot.
void FillAfterMigration(Connection& db, int version) {
  if (version == 13) FillMachineNames(db);
}

}  // namespace

const std::vector<std::string_view>& Migrations() {
  static const std::vector<std::string_view> kMigrations = {
      // Version 1: identities, runs, cells and their steps.
      R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (0);
CREATE TABLE machines (
  id INTEGER PRIMARY KEY,
  arch TEXT NOT NULL, cpu TEXT NOT NULL, isa_features TEXT NOT NULL,
  os TEXT NOT NULL, kernel TEXT NOT NULL, libc TEXT NOT NULL,
  UNIQUE (arch, cpu, isa_features, os, kernel, libc));
CREATE TABLE math_libraries (
  id INTEGER PRIMARY KEY,
  profile TEXT NOT NULL, name TEXT NOT NULL, version TEXT NOT NULL, fingerprint TEXT NOT NULL,
  UNIQUE (profile, name, version, fingerprint));
CREATE TABLE builds (
  id INTEGER PRIMARY KEY,
  engine TEXT NOT NULL, version TEXT NOT NULL, revision TEXT NOT NULL, dirty INTEGER NOT NULL,
  compiler TEXT NOT NULL, flags TEXT NOT NULL,
  UNIQUE (engine, version, revision, dirty, compiler, flags));
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL, weights_xxh3 TEXT NOT NULL, vocab_size INTEGER NOT NULL,
  UNIQUE (spec, weights_xxh3, vocab_size));
CREATE TABLE scenarios (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  elapsed_ms REAL NOT NULL,
  machine_id INTEGER REFERENCES machines (id),
  status TEXT NOT NULL,
  cell_count INTEGER NOT NULL);
CREATE TABLE cells (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  checkpoint TEXT NOT NULL,
  checkpoint_id INTEGER REFERENCES checkpoints (id),
  scenario_id INTEGER NOT NULL REFERENCES scenarios (id),
  config_name TEXT NOT NULL, kernels TEXT NOT NULL, threads INTEGER NOT NULL, isa TEXT NOT NULL,
  gemv_chunk_bytes INTEGER NOT NULL, math TEXT NOT NULL,
  build_id INTEGER REFERENCES builds (id),
  math_library_id INTEGER REFERENCES math_libraries (id),
  code TEXT NOT NULL, exit_code INTEGER NOT NULL, signal INTEGER NOT NULL,
  message TEXT NOT NULL, stderr_tail TEXT NOT NULL, elapsed_ms REAL NOT NULL);
CREATE INDEX cells_by_run ON cells (run_id);
CREATE TABLE steps (
  cell_id INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
  idx INTEGER NOT NULL, kind TEXT NOT NULL, position INTEGER NOT NULL,
  input_token INTEGER NOT NULL, token INTEGER NOT NULL,
  fnv1a64 TEXT NOT NULL, xxh3_64 TEXT NOT NULL,
  argmax INTEGER NOT NULL, nan_count INTEGER NOT NULL, inf_count INTEGER NOT NULL,
  PRIMARY KEY (cell_id, idx));
)sql",
      // Version 2: activation traces, the gate's diagnosis on the run, and
      // raw-logit dump paths on the cells.
      R"sql(
CREATE TABLE traces (
  cell_id INTEGER NOT NULL REFERENCES cells (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, position INTEGER NOT NULL, layer INTEGER NOT NULL,
  op TEXT NOT NULL, xxh3_64 TEXT NOT NULL,
  PRIMARY KEY (cell_id, seq));
ALTER TABLE runs ADD COLUMN diagnosis_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN diagnosis_headline TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN command TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN dump_path TEXT NOT NULL DEFAULT '';
)sql",
      // Version 3: the ISA the engine resolved `auto` to, from its hello.
      R"sql(
ALTER TABLE cells ADD COLUMN isa_used TEXT NOT NULL DEFAULT '';
)sql",
      // Version 4: the rest of the gate's diagnosis (its detail lines and its
      // divergences), so a stored run reports as completely as a fresh one.
      R"sql(
CREATE TABLE diagnosis_details (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, text TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
CREATE TABLE divergences (
  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  checkpoint TEXT NOT NULL, scenario TEXT NOT NULL,
  config_a TEXT NOT NULL, config_b TEXT NOT NULL,
  step_index INTEGER NOT NULL, kind TEXT NOT NULL, position INTEGER NOT NULL,
  layer INTEGER, op TEXT NOT NULL, detail TEXT NOT NULL,
  PRIMARY KEY (run_id, seq));
)sql",
      // Version 5: `samebits bisect` sessions and their steps; each step's
      // run is an ordinary run, tagged with the bisect through its step row.
      R"sql(
CREATE TABLE bisects (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL, elapsed_ms REAL NOT NULL DEFAULT 0,
  repository TEXT NOT NULL, good TEXT NOT NULL, bad TEXT NOT NULL,
  command TEXT NOT NULL,
  status TEXT NOT NULL,
  culprit TEXT NOT NULL DEFAULT '', summary TEXT NOT NULL DEFAULT '');
CREATE TABLE bisect_steps (
  bisect_id INTEGER NOT NULL REFERENCES bisects (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  revision TEXT NOT NULL, tree TEXT NOT NULL, role TEXT NOT NULL, verdict TEXT NOT NULL,
  run_id INTEGER REFERENCES runs (id) ON DELETE SET NULL,
  note TEXT NOT NULL,
  PRIMARY KEY (bisect_id, seq));
CREATE INDEX bisect_steps_by_run ON bisect_steps (run_id);
)sql",
      // Version 6: `samebits bench A B` results and their timed runs.
      R"sql(
CREATE TABLE benches (
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL, command TEXT NOT NULL, machine TEXT NOT NULL,
  preflight TEXT NOT NULL, forced INTEGER NOT NULL,
  a_label TEXT NOT NULL, a_engine TEXT NOT NULL, a_revision TEXT NOT NULL, a_config TEXT NOT NULL,
  b_label TEXT NOT NULL, b_engine TEXT NOT NULL, b_revision TEXT NOT NULL, b_config TEXT NOT NULL,
  checkpoint TEXT NOT NULL, scenario TEXT NOT NULL,
  median_a_ms REAL NOT NULL, median_b_ms REAL NOT NULL,
  ratio REAL NOT NULL, ratio_low REAL, ratio_high REAL, pairs INTEGER NOT NULL,
  identical INTEGER NOT NULL, identity_detail TEXT NOT NULL);
CREATE TABLE bench_samples (
  bench_id INTEGER NOT NULL REFERENCES benches (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, side TEXT NOT NULL, round INTEGER NOT NULL,
  ok INTEGER NOT NULL, failure TEXT NOT NULL,
  elapsed_ms REAL NOT NULL, wall_ms REAL NOT NULL, steps INTEGER NOT NULL,
  last_xxh3_64 TEXT NOT NULL,
  PRIMARY KEY (bench_id, seq));
)sql",
      // Version 7: the decoded text of each step's token (protocol `text`).
      R"sql(
ALTER TABLE steps ADD COLUMN text TEXT NOT NULL DEFAULT '';
)sql",
      // Version 8: the checkpoint spec each cell's engine was given, its file
      // absolute (the key in `checkpoint` is relative to the project root).
      R"sql(
ALTER TABLE cells ADD COLUMN engine_checkpoint TEXT NOT NULL DEFAULT '';
)sql",
      // Version 9: batched configurations (the scenario's sequence decoded
      // beside companions): each cell's batch, each step's place in its
      // batched forward call (NULL when unbatched), and where in the batch a
      // divergence first showed.
      R"sql(
ALTER TABLE cells ADD COLUMN batch INTEGER NOT NULL DEFAULT 1;
ALTER TABLE cells ADD COLUMN batch_seed INTEGER NOT NULL DEFAULT 1;
ALTER TABLE cells ADD COLUMN batch_schedule TEXT NOT NULL DEFAULT 'together';
ALTER TABLE steps ADD COLUMN batch_sequences INTEGER;
ALTER TABLE steps ADD COLUMN batch_rows INTEGER;
ALTER TABLE steps ADD COLUMN batch_slot INTEGER;
ALTER TABLE steps ADD COLUMN batch_row INTEGER;
ALTER TABLE divergences ADD COLUMN batch_place TEXT NOT NULL DEFAULT '';
)sql",
      // Version 10: the XXH3-64 of each cell's scenario file, so two
      // scenarios with one name are told apart ('' for cells stored before).
      R"sql(
ALTER TABLE cells ADD COLUMN scenario_xxh3 TEXT NOT NULL DEFAULT '';
)sql",
      // Version 11: the statistics of a raw logit dump that came in a bundle
      // (harness/exchange/bundle_dumps.h), NULL when none did: the row
      // length on the cell, each row's statistics on its step.
      R"sql(
ALTER TABLE cells ADD COLUMN dump_row_length INTEGER;
ALTER TABLE steps ADD COLUMN dump_argmax INTEGER;
ALTER TABLE steps ADD COLUMN dump_max_abs REAL;
ALTER TABLE steps ADD COLUMN dump_nan INTEGER;
ALTER TABLE steps ADD COLUMN dump_inf INTEGER;
)sql",
      // Version 12: engines described by profiles (engines/NAME.json): the
      // profile's engine name ('' for samebits-engine), the configuration's
      // value on every axis as a JSON object ('' for samebits-engine, whose
      // parameters are the columns above), whether it is the profile's
      // baseline, and the known difference the profile declares for it.
      R"sql(
ALTER TABLE cells ADD COLUMN engine TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN config_params TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cells ADD COLUMN known_difference TEXT NOT NULL DEFAULT '';
)sql",
      // Version 13: each run's machine name (harness/analysis/machine_name.h),
      // so runs can be selected by machine. Older runs are named from the
      // machine they recorded (FillMachineNames, right after this).
      R"sql(
ALTER TABLE runs ADD COLUMN machine_name TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_by_machine_name ON runs (machine_name, id);
)sql",
      // Version 14: sharded gates (harness/analysis/shard.h): the group a
      // shard's run belongs to and its K/N ('', 0, 0: not a shard).
      R"sql(
ALTER TABLE runs ADD COLUMN shard_group TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN shard_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN shard_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_shard_group ON runs (shard_group, id);
)sql",
      // Version 15: where a bisect step's time went (issue 26): building the
      // revision, running the selection, judging and storing it, in
      // milliseconds (-1: not measured, as in steps stored before).
      R"sql(
ALTER TABLE bisect_steps ADD COLUMN build_ms REAL NOT NULL DEFAULT -1;
ALTER TABLE bisect_steps ADD COLUMN run_ms REAL NOT NULL DEFAULT -1;
ALTER TABLE bisect_steps ADD COLUMN judge_ms REAL NOT NULL DEFAULT -1;
)sql",
      // Version 16: the dot-product profile for quantized weights a cell ran
      // under (--quant-dot; harness/analysis/numeric_profile.h): 'exact' for
      // every cell stored before, which is what their engines ran.
      R"sql(
ALTER TABLE cells ADD COLUMN quant_dot TEXT NOT NULL DEFAULT 'exact';
)sql",
      // Version 17: the accelerator a cell computed on (its hello's
      // `device`, PROTOCOL.md) and what its engine's repeats in one process
      // gave (its done's `repeats`), each as the protocol's JSON object
      // text; '' for a cell on the CPU, run once, as every cell stored before.
      R"sql(
ALTER TABLE cells ADD COLUMN device TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN repeats TEXT NOT NULL DEFAULT '';
)sql",
      // Version 18: what a served engine's hashes cover (its hello's
      // `readback`), its identity (its hello's `server`) and what its
      // sampling at a temperature above 0 showed (its done's `sampling`),
      // each as JSON object text; '' for whole rows, for an engine that is
      // no server and for a cell that did not sample, as every cell stored
      // before.
      R"sql(
ALTER TABLE cells ADD COLUMN readback TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN server TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN sampling TEXT NOT NULL DEFAULT '';
)sql",
  };
  return kMigrations;
}

int CurrentSchemaVersion() {
  return static_cast<int>(Migrations().size());
}

int SchemaVersion(Connection& db) {
  const Connection::TableCensus census = db.CountTables("schema_version");
  if (!census.has_named) {
    if (census.tables != 0) {
      throw StoreError(
          "database " + db.path() +
          (db.backend() == Backend::kSqlite ? ": an SQLite database" : ": a PostgreSQL database") +
          ", but not a samebits one (no schema_version table); "
          "refusing to touch it");
    }
    return 0;
  }
  // SQLite keeps any value in any column; PostgreSQL's column is an integer.
  Statement version = db.Prepare(db.backend() == Backend::kSqlite
                                     ? "SELECT version, typeof(version) FROM schema_version"
                                     : "SELECT version, 'integer' FROM schema_version");
  const std::string damaged = "database " + db.path() + ": ";
  const std::string untouched =
      " (the file is not a samebits database or is "
      "damaged; it was left untouched)";
  if (!version.Step()) throw StoreError(damaged + "its schema_version table is empty" + untouched);
  if (version.Text(1) != "integer" || version.Int(0) < 0) {
    throw StoreError(damaged + "its schema_version is '" + version.Text(0) +
                     "', not a version number" + untouched);
  }
  const int64_t value = version.Int(0);
  if (version.Step()) {
    throw StoreError(damaged + "its schema_version table has more than one row" + untouched);
  }
  return static_cast<int>(std::min<int64_t>(value, 1 << 30));
}

void Migrate(Connection& db, int target) {
  const int goal = target < 0 ? CurrentSchemaVersion() : target;
  // Reads the version first without a write lock, so a database that is
  // already current (the common case) costs no write transaction.
  int version = SchemaVersion(db);
  if (version > CurrentSchemaVersion()) {
    throw StoreError("database " + db.path() + ": schema version " + std::to_string(version) +
                     " is newer than this samebits knows (" +
                     std::to_string(CurrentSchemaVersion()) + "); use a newer samebits");
  }
  if (version >= goal) return;
  WithWriteTransaction(db, [&] {
    // Another process may have migrated between the read and the lock.
    version = SchemaVersion(db);
    for (int v = version; v < goal; ++v) {
      db.Exec(db.AdaptSchema(Migrations()[static_cast<size_t>(v)]));
      FillAfterMigration(db, v + 1);
      db.Exec("UPDATE schema_version SET version = " + std::to_string(v + 1));
    }
  });
}

}  // namespace samebits::store
