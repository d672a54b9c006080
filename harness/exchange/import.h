// Adding bundled runs to a store (`samebits import`): idempotently (a run
// whose content id the store already holds is skipped, so importing a
// bundle twice adds nothing) and whole (every new run of every bundle lands
// in one write transaction, or none does).
//
// A cell whose bundle carried its raw logit rows gets them back as a dump
// file, laid out as local dumps are (harness/store/SCHEMA.md), in
// <database folder>/dumps/import-<content id>/; its `dump_path` points at
// it. Every imported dump's statistics are kept in the store, so a cell
// exported with statistics only still has them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"

namespace samebits::exchange {

struct ImportOptions {
  // Dump paths are stored relative to this folder when the dump lies below
  // it (the project root, as store::StoredDumpPath does), else absolute;
  // stored relative paths are resolved against it. Empty: new dump paths
  // are stored absolute, and stored relative ones resolve against the
  // current directory.
  std::string root;
};

struct ImportResult {
  std::vector<int64_t> added;  // the new runs' ids, in the bundles' order
  int already_present = 0;     // runs the store held already
  int dumps_written = 0;       // dump files written for the new runs
  // Folders an interrupted earlier import of this database left behind
  // (ImportRuns), removed.
  int orphans_swept = 0;
};

// Adds `runs` (from ReadBundle) to `store` in one transaction; runs whose
// content the store (or an earlier run of `runs`) holds are skipped. Dump
// files are written into a staging folder and moved into place just before
// the transaction commits, so an import interrupted at any point (SIGINT,
// SIGTERM, kill -9) leaves no file that a stored run points to missing, and
// at most folders that point nowhere; each import first sweeps those its
// database's earlier imports left (`orphans_swept`). Files written for runs
// that end up not stored are removed again.
ImportResult ImportRuns(store::Store& store, const std::vector<harness::RunResult>& runs,
                        const ImportOptions& options = {});

// Returns the id of a stored run whose content id is `content_id` and that
// started at `started_at`, or 0. A stored cell with a dump file and no
// stored statistics (a local run) counts with its file's statistics, read
// from `dump_base_dir` for a relative path, as `samebits export` would.
int64_t FindStoredRun(store::Store& store, const std::string& started_at,
                      const std::string& content_id, const std::string& dump_base_dir = "");

}  // namespace samebits::exchange
