// The scenario driver: feeds a scenario's prompt, decode steps and extend
// chunks through a `model::Forward` and reports every output row (a protocol
// `step`) and, on request, every activation-trace record. It knows nothing of
// JSON or of the command line, so tests drive it directly.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/formats/vocabulary.h"
#include "engine/model/config.h"
#include "engine/model/forward.h"
#include "engine/numerics/math.h"
#include "engine/run/scenario.h"

namespace samebits::run {

// A scenario whose token sources are resolved against one checkpoint.
struct PreparedScenario {
  const Scenario* scenario = nullptr;
  std::vector<int32_t> prompt;
  // One entry per scenario step: the chunk of an extend step, else empty.
  std::vector<std::vector<int32_t>> chunks;
  // Every position the run will feed (prompt, decodes and chunks).
  int64_t total_positions = 0;
  // Output rows the run will emit (protocol `step` records).
  int64_t total_steps = 0;
};

// Returns `scenario` resolved for `config`: random sequences drawn for its
// vocabulary, text tokenized with `vocabulary` (the prompt with BOS when
// the vocabulary adds one, an extend chunk without), token ids checked against `vocab_size`, the
// length checked against `max_seq_len`. Throws ScenarioError, e.g. for text when `vocabulary` is
// null (the checkpoint has no tokenizer). `scenario` must outlive the result.
PreparedScenario PrepareScenario(const Scenario& scenario, const model::ModelConfig& config,
                                 const formats::Vocabulary* vocabulary = nullptr);

// Where an output row sat in a batched forward call (protocol::BatchPlace):
// the call fed `sequences` sequences in `rows` token rows; the scenario's
// sequence was the `slot`-th in row order and this was row `row`.
struct BatchPlace {
  int sequences = 1;
  int rows = 1;
  int slot = 0;
  int row = 0;
};

// One output row. `logits` is valid only during the callback.
struct StepResult {
  int index = 0;
  ScenarioStep::Kind kind = ScenarioStep::Kind::kPrefill;
  int position = 0;
  int32_t input_token = 0;
  int32_t token = 0;  // chosen by the scenario's sampler with step `index`
  uint64_t fnv1a64 = 0;
  uint64_t xxh3_64 = 0;
  int32_t argmax = 0;
  int nan_count = 0;
  int inf_count = 0;
  std::span<const float> logits;
  std::optional<BatchPlace> batch;  // set in batched runs (batch > 1) only
};

// One forward call of a companion sequence in a batched run: the tokens it
// fed and the logits of its output row (valid only during the callback).
struct CompanionCall {
  int companion = 0;  // CompanionPlan::id
  std::span<const int32_t> tokens;
  std::span<const float> logits;
};

// One activation-trace record: the XXH3-64 of one op's output for one row.
struct TraceResult {
  int position = 0;
  int layer = -1;
  std::string op;
  uint64_t xxh3_64 = 0;
};

struct DriverSinks {
  // Called for every output row, in step order. Required.
  std::function<void(const StepResult&)> on_step;
  // When set, the forward pass is traced and every record is passed here,
  // after the steps of the pass that computed it. When empty, no trace is
  // collected at all (tracing costs a hash per op and row).
  std::function<void(const TraceResult&)> on_trace;
  // When set, called after every forward call for each companion sequence
  // of a batched run (tests replay companions alone with it).
  std::function<void(const CompanionCall&)> on_companion;
};

struct RunSummary {
  int64_t steps = 0;
  int64_t positions = 0;
};

// Runs `prepared` through `forward` from a fresh state, alone (batch 1;
// batch_driver.h runs it beside companions). Decode steps feed the token
// chosen at the previous output row. Returns the counts. Exceptions from
// the forward pass propagate.
RunSummary RunScenario(const PreparedScenario& prepared, const model::ModelConfig& config,
                       model::Forward& forward, const numerics::MathLibrary& math,
                       const DriverSinks& sinks);

}  // namespace samebits::run
