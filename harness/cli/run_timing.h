// Saving a fresh run with each cell's store time measured, and printing
// where the run's time went (`run` and `gate`: the total split after the
// summary, each cell's split with --verbose).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>

#include "harness/analysis/results.h"
#include "harness/analysis/shard.h"
#include "harness/store/store.h"

namespace samebits::cli {

// Adds -v,--verbose: each cell's time split after the run.
void AddVerboseFlag(CLI::App* sub, bool* verbose);

// Saves `run` in `store` (one transaction, Store::SaveRun; a run with a
// `shard` under its group, store/shard_records.h) and sets each cell's
// `timing.store_ms` to the time its rows took. Returns the run's id.
int64_t SaveRunTimed(store::Store& store, harness::RunResult& run);

// Prints the run's total time split (one line) and, with `verbose`, each
// cell's split before it.
void PrintTimeSplit(const harness::RunResult& run, bool verbose);

}  // namespace samebits::cli
