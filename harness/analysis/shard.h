// Sharded gates: a gate's cells split across machines (`samebits gate
// --shard K/N --group ID`), each shard stored as its own run under the
// group, and judged together by `samebits verdict --group ID`.
//
// A cell belongs to a shard by a hash of its key alone (checkpoint,
// scenario, configuration name: XXH3-64 of the three, then Lamping and
// Veach's jump consistent hash onto N shards). So every machine computes
// the same split without talking to the others; adding a checkpoint (or a
// scenario, a configuration) moves no existing cell; and going from N to
// N + 1 shards moves only about 1/(N + 1) of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

// The most shards a gate may be split into.
inline constexpr int kMaxShards = 4096;

// Shard `index` of `count` (1-based: 1 <= index <= count).
struct ShardSpec {
  int index = 0;
  int count = 0;
};

// (A run's ShardInfo, its group and K/N, is in results.h.)

// One stored run of a sharded gate (store/shard_records.h, ShardsOf).
struct StoredShard {
  int64_t run_id = 0;
  int index = 0;  // K
  int count = 0;  // N
  std::string started_at;
  std::string machine_name;
};

// Returns why `text` is not "K/N" with 1 <= K <= N <= kMaxShards (""
// when it is one) and sets `*out` when it is.
std::string ParseShardSpec(const std::string& text, ShardSpec* out);

// Returns why `group` is not a group id ("" when it is one): a label as
// LabelProblem (machine_name.h) says.
std::string ShardGroupProblem(const std::string& group);

// Returns the shard (1 to `count`) the cell of this key belongs to.
int ShardOfCell(const std::string& checkpoint, const std::string& scenario,
                const std::string& config_name, int count);

// Returns the cells of `cells` that belong to `shard`, in their order.
std::vector<Cell> CellsOfShard(const std::vector<Cell>& cells, const ShardSpec& shard);

}  // namespace samebits::harness
