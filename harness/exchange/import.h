// Adding bundled runs to a store (`samebits import`): idempotently (a run
// whose content id the store already holds is skipped, so importing a
// bundle twice adds nothing) and whole (every new run of every bundle lands
// in one write transaction, or none does).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/store/store.h"

namespace samebits::exchange {

struct ImportResult {
  std::vector<int64_t> added;  // the new runs' ids, in the bundles' order
  int already_present = 0;     // runs the store held already
};

// Adds `runs` (from ReadBundle) to `store` in one transaction; runs whose
// content the store (or an earlier run of `runs`) holds are skipped.
ImportResult ImportRuns(store::Store& store, const std::vector<harness::RunResult>& runs);

// Returns the id of a stored run whose content id is `content_id` and that
// started at `started_at`, or 0.
int64_t FindStoredRun(store::Store& store, const std::string& started_at,
                      const std::string& content_id);

}  // namespace samebits::exchange
