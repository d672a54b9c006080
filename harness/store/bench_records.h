// What `samebits bench A B` keeps in the store (SCHEMA.md, version 6): one
// row per bench with its summary, one per timed run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/runner/ab_bench.h"
#include "harness/store/store.h"

namespace samebits::store {

struct BenchRecord {
  std::string started_at, command, machine, preflight;
  bool forced = false;
  runner::BenchSide a, b;
  runner::BenchSummary summary;
  std::vector<runner::BenchSample> samples;
};

// Saves the bench in one transaction. Returns its id.
int64_t SaveBench(Store& store, const BenchRecord& bench);

// Returns the samples of bench `id` (outputs not kept: the last step's hash
// only), in run order.
std::vector<runner::BenchSample> LoadBenchSamples(Store& store, int64_t id);

}  // namespace samebits::store
