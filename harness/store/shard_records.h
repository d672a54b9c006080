// What a sharded gate keeps in the store (SCHEMA.md, version 14; "Sharded
// gates"): each shard's run is an ordinary run whose row holds its group
// and K/N (RunResult::shard, written by Store::SaveRun with the run), which
// `samebits verdict` reads back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/analysis/shard.h"
#include "harness/store/store.h"

namespace samebits::store {

// Returns the runs stored under the shard group `group`, oldest first (a
// shard stored twice, by a retried job, appears twice).
std::vector<harness::StoredShard> ShardsOf(Store& store, const std::string& group);

// Returns the shard groups, the one with the newest run first, at most `limit`.
std::vector<std::string> ShardGroups(Store& store, int limit);

}  // namespace samebits::store
