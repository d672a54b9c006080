// What a sharded gate keeps in the store (SCHEMA.md, version 14; "Sharded
// gates"): each shard's run is an ordinary run, marked with its group and
// K/N in the same transaction, which `samebits verdict` reads back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/analysis/shard.h"
#include "harness/store/store.h"

namespace samebits::store {

// Saves `run` as shard `shard` of its group in one transaction (the run's
// rows, as Store::SaveRun writes them, and its K/N). Returns the run's id.
int64_t SaveShardRun(Store& store, const harness::RunResult& run, const harness::ShardInfo& shard);

// Returns the runs stored under the shard group `group`, oldest first (a
// shard stored twice, by a retried job, appears twice).
std::vector<harness::StoredShard> ShardsOf(Store& store, const std::string& group);

// Returns the shard groups, the one with the newest run first, at most `limit`.
std::vector<std::string> ShardGroups(Store& store, int limit);

}  // namespace samebits::store
