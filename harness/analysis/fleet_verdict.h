// The verdict on a sharded gate (`samebits verdict --group ID`): which
// stored run counts for each shard, the union of the shards' cells (judged
// once, by the gate's own judge), and the shards' machines compared with
// each other as `samebits compare` compares two runs (run_compare.h).
//
// Machines are compared by agreement group: the cells of one checkpoint x
// scenario x math profile (x engine) must all give the same bits, so where
// two machines ran cells of one group (each shard holds other
// configurations of it), one cell of each machine stands for that machine's
// outputs, and the two are compared under the group's name. A machine whose
// libm cells differ from another's is then named with the cause the compare
// code gives (the math library, the ISA, the architecture, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/analysis/run_compare.h"
#include "harness/analysis/shard.h"

namespace samebits::harness {

// Which stored run counts for each shard of a group.
struct ShardChoice {
  int count = 0;                 // N
  std::vector<int64_t> run_ids;  // [K - 1]: the run of shard K, 0 when missing
  std::vector<int> missing;      // the K of each missing shard, ascending
  // A shard stored more than once (a retried CI job): "shard 2/4 was
  // stored 2 times (runs 5, 9): the newest, run 9, counts".
  std::vector<std::string> notes;
};

// Returns the run that counts for each shard of `stored` (every run of one
// group, oldest first): the newest of each K. `expected` is N when given
// (> 0), else the N the shards recorded. Throws std::invalid_argument when
// the group has no runs, when its runs disagree on N, or when `expected`
// differs from theirs (each message names `group`).
ShardChoice ChooseShards(const std::vector<StoredShard>& stored, int expected,
                         const std::string& group);

// Returns "2/4, 4/4": the missing shards of `choice`.
std::string MissingShardsText(const ShardChoice& choice);

// Returns one run holding every cell of `shards` (each a shard's stored
// run, in shard order), to be judged once: the first shard's machine, the
// earliest start, the summed elapsed time, `command` as its command. A
// cell from a machine of another architecture than the first keeps it
// (CellResult::machine_arch): its libm outputs are its architecture's.
RunResult UnionOfShards(const std::vector<RunResult>& shards, const std::string& command);

// One machine of a group compared with the group's first machine.
struct MachineComparison {
  std::string machine;  // the machine compared (MachineNameOf)
  RunComparison comparison;
};

// Returns each machine of `shards` after the first (by MachineNameOf, in
// shard order) compared with the first, group by group (as this file's
// comment says); empty with a single machine.
std::vector<MachineComparison> CompareShardMachines(const std::vector<RunResult>& shards,
                                                    const CompareOptions& options = {});

}  // namespace samebits::harness
