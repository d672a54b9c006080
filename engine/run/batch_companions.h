// The companion sequences of a batched run (`run --batch N`): who joins the
// scenario's sequence in which forward call, with which prompt, for how
// many decode steps, and in which row order the sequences of each call are
// laid out. Everything follows from the batch options alone (splitmix64,
// numerics/splitmix.h), so a run is reproducible from its `hello.config`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/config.h"

namespace samebits::run {

// The largest batch `run --batch` accepts.
inline constexpr int kMaxBatch = 64;

enum class BatchSchedule : uint8_t {
  // Every companion prefills in the first call, beside the scenario's
  // prefill, and decodes to the scenario's end (or its context's end).
  kTogether,
  // Companions join and leave at different calls, as continuous batching
  // does: a slot whose companion finished is refilled after a seeded gap by
  // a new companion, whose prefill runs beside the others' decodes. The row
  // order of the sequences is reshuffled at every call.
  kStaggered,
};

// Returns "together" or "staggered".
const char* BatchScheduleName(BatchSchedule schedule);
bool ParseBatchSchedule(const std::string& name, BatchSchedule* out);

struct BatchOptions {
  int batch = 1;  // the scenario's sequence and batch - 1 companion slots
  uint64_t seed = 1;
  BatchSchedule schedule = BatchSchedule::kTogether;
};

// One companion: it prefills `prompt` in call `join` and then decodes
// (greedy) in the `decodes` calls after it, in slot `slot`.
struct CompanionPlan {
  int id = 0;  // 0, 1, 2 ... in order of joining, then slot
  int slot = 0;
  int join = 0;
  int decodes = 0;
  std::vector<int32_t> prompt;  // random ids of `config`'s vocabulary

  // Returns whether the companion feeds a row in call `call`.
  bool Active(int call) const { return call >= join && call <= join + decodes; }
};

// Returns the companions of a run of `calls` forward calls: prompts of 1 to
// 24 tokens, every companion's positions within `config.max_seq_len`.
// Throws std::invalid_argument for a batch outside [1, kMaxBatch].
std::vector<CompanionPlan> PlanCompanions(const BatchOptions& options,
                                          const model::ModelConfig& config, int calls);

// Returns the row order of call `call`'s `count` sequences: a permutation
// of 0 .. count - 1 (entry i: which sequence goes i-th). `together` keeps
// one seeded order for the whole run; `staggered` draws a new one per call.
std::vector<int> RowOrder(const BatchOptions& options, int call, int count);

}  // namespace samebits::run
