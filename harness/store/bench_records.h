// What `samebits bench A B` keeps in the store (SCHEMA.md, version 6): one
// row per bench with its summary, one per timed run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/bench_summary.h"
#include "harness/store/store.h"

namespace samebits::store {

// Saves the bench in one transaction. Returns its id.
int64_t SaveBench(Store& store, const harness::BenchRecord& bench);

// Returns the samples of bench `id` (outputs not kept: the last step's hash
// only), in run order.
std::vector<harness::BenchSample> LoadBenchSamples(Store& store, int64_t id);

}  // namespace samebits::store
