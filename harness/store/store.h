// The run store: every run of the matrix, with its identities, cells, steps
// and traces, in one database (SCHEMA.md): an SQLite file, or a PostgreSQL
// server a fleet of machines shares. Several samebits processes
// may write one database at once: each run lands in a single write
// transaction, so a reader sees a run whole or not at all, and a harness
// killed while saving leaves nothing behind.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/analysis/cell_history.h"
#include "harness/analysis/results.h"
#include "harness/store/connection.h"

namespace samebits::store {

// One line of `samebits runs`.
struct RunSummary {
  int64_t id = 0;
  std::string started_at;
  double elapsed_ms = 0;
  std::string status;  // harness::VerdictName: "PASS", "FAIL" or "UNCHECKED"
  std::string diagnosis_kind;
  std::string headline;
  std::string command;
  std::string machine_name;           // harness/analysis/machine_name.h
  std::map<std::string, int> counts;  // result code name -> cells
};

// What a command does with the store.
enum class Access {
  kReadWrite,  // saves runs: the store is created, upgraded, checked writable
  kRead,       // only reads: the file is opened read-only when it is current
};

class Store {
 public:
  // Opens the database at `path`, creating it (and its folder) when missing
  // and bringing its schema up to date. Throws StoreError, leaving a file
  // that is not a samebits database untouched (nothing is written, not even
  // its journal mode, before the file is known to be a samebits store).
  // With kReadWrite a store that cannot be written, or that is damaged, is
  // refused here, before any work whose result could not be saved. With
  // kRead a current store is opened read-only (a file one may read but not
  // write can be read) and nothing is ever written or created: a missing
  // store is "no such store", an empty or older one is refused (a writer
  // upgrades it).
  //
  // `path` is what --db says (location.h): an SQLite file's path, or a
  // PostgreSQL URL or keyword string. A server's store is the same schema
  // and queries; it is never created (the database must exist: the schema
  // is), and a server that cannot be reached is an error naming its host
  // after the connect timeout. Files that go with a server's store (dumps
  // an import writes) are kept in `server_side_folder` (default: the
  // current folder); a file's go beside it.
  explicit Store(const std::string& path, Access access = Access::kReadWrite,
                 const std::string& server_side_folder = "");

  // Saves `run` (its `run_id` is ignored) in one transaction. Returns the
  // new run's id.
  int64_t SaveRun(const harness::RunResult& run);

  // Writes `run`'s rows as SaveRun does, but inside the write transaction
  // the caller holds (WithWriteTransaction over connection()), so several
  // runs can land together or not at all. Returns the new run's id.
  int64_t InsertRun(const harness::RunResult& run);

  // Returns the run `id`, with its cells, steps and traces. Throws
  // StoreError when there is no such run.
  harness::RunResult LoadRun(int64_t id);

  // Returns the newest runs first, at most `limit`; only those of the
  // machine named `machine` unless it is empty.
  std::vector<RunSummary> ListRuns(int limit, const std::string& machine = "");

  // Returns the stored results of one cell (its checkpoint key, scenario
  // name and configuration name, as `show` prints them), with their steps
  // but not their traces: the newest `limit` runs that hold it, newest
  // first, only the machine named `machine`'s unless that is empty.
  std::vector<harness::CellSighting> CellHistory(const harness::CellKey& key, int limit,
                                                 const std::string& machine = "");

  // Returns the id of the newest run, or 0 when there is none.
  int64_t LatestRunId();

  // Returns the id of the newest run of the machine named `machine`
  // (RunResult::machine_name), or 0 when it has none.
  int64_t LatestRunIdOf(const std::string& machine);

  // Returns the names of the machines that have runs, sorted.
  std::vector<std::string> MachineNames();

  Connection& connection() { return *db_; }

  // Returns the folder where files that go with this store are kept: the
  // SQLite file's folder, or the server store's side folder.
  const std::string& side_folder() const { return side_folder_; }

  // Called after each cell's rows are written inside SaveRun's transaction;
  // tests throw from it to show that a half-written run leaves no rows.
  std::function<void(int cells_written)> after_cell_hook;

 private:
  std::unique_ptr<Connection> db_;
  std::string side_folder_;
};

// The names the store records (harness/analysis/results.h).
using harness::DiagnosisKindName;
using harness::ParseDiagnosisKind;
using harness::ParseResultCode;

}  // namespace samebits::store
