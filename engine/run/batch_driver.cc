#include "engine/run/batch_driver.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"

namespace samebits::run {
namespace {

// Buffers trace records of one forward call, hashed as they arrive.
class HashingTraceSink : public model::TraceSink {
 public:
  void Record(int layer, const char* op, int position, const float* data, int64_t n) override {
    records_.push_back(TraceResult{
        position, layer, op,
        numerics::HashActivationsXxh3(std::span<const float>(data, static_cast<size_t>(n)))});
  }
  std::vector<TraceResult>& records() { return records_; }

 private:
  std::vector<TraceResult> records_;
};

// One forward call of the scenario's sequence: a prefill, an extend chunk,
// or a decode (which feeds the token chosen at the previous output row).
struct ScenarioCall {
  ScenarioStep::Kind kind = ScenarioStep::Kind::kPrefill;
  std::span<const int32_t> tokens;  // empty for a decode
  bool all_positions = false;
};

// Returns the scenario's forward calls in order.
std::vector<ScenarioCall> ScenarioCalls(const PreparedScenario& prepared) {
  const Scenario& scenario = *prepared.scenario;
  std::vector<ScenarioCall> calls;
  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    const ScenarioStep& step = scenario.steps[i];
    switch (step.kind) {
      case ScenarioStep::Kind::kPrefill:
        calls.push_back({step.kind, prepared.prompt, step.all_positions});
        break;
      case ScenarioStep::Kind::kDecode:
        for (int d = 0; d < step.decode_count; ++d) calls.push_back({step.kind, {}, false});
        break;
      case ScenarioStep::Kind::kExtend:
        calls.push_back({step.kind, prepared.chunks[i], step.all_positions});
        break;
    }
  }
  return calls;
}

// A companion while it runs: its state, its next decode token and its logits.
struct LiveCompanion {
  model::InferenceState state;
  int32_t next = 0;
  std::vector<float> logits;
};

// Returns what a companion feeds in call `call`: its prompt when it joins,
// else the token its previous output row chose.
std::span<const int32_t> CompanionTokens(const CompanionPlan& plan, const LiveCompanion& live,
                                         int call) {
  return call == plan.join ? std::span<const int32_t>(plan.prompt)
                           : std::span<const int32_t>(&live.next, 1);
}

}  // namespace

RunSummary RunBatchedScenario(const PreparedScenario& prepared, const model::ModelConfig& config,
                              model::Forward& forward, const numerics::MathLibrary& math,
                              const BatchOptions& options, const DriverSinks& sinks) {
  const Scenario& scenario = *prepared.scenario;
  const size_t vocab = static_cast<size_t>(config.vocab_size);
  const std::vector<ScenarioCall> plan = ScenarioCalls(prepared);
  const std::vector<CompanionPlan> companions =
      PlanCompanions(options, config, static_cast<int>(plan.size()));
  std::vector<std::optional<LiveCompanion>> live(companions.size());

  model::InferenceState state = model::MakeState(config);
  HashingTraceSink trace_sink;
  model::TraceSink* trace = sinks.on_trace ? &trace_sink : nullptr;
  std::vector<float> logits;
  RunSummary summary;
  int32_t last_token = 0;  // the token chosen at the scenario's latest output row

  // The sequences of one call before ordering: -1 is the scenario's.
  std::vector<int> members;
  std::vector<model::SequenceCall> batch;
  for (int c = 0; c < static_cast<int>(plan.size()); ++c) {
    const ScenarioCall& call = plan[c];
    const int32_t token = last_token;
    const std::span<const int32_t> tokens = call.kind == ScenarioStep::Kind::kDecode
                                                ? std::span<const int32_t>(&token, 1)
                                                : call.tokens;
    members.assign(1, -1);
    for (const CompanionPlan& companion : companions) {
      if (!companion.Active(c)) continue;
      if (c == companion.join) live[companion.id].emplace().state = model::MakeState(config);
      members.push_back(companion.id);
    }

    // Lay the sequences out in this call's row order.
    batch.clear();
    int slot = 0, row0 = 0, rows = 0;
    for (const int pick : RowOrder(options, c, static_cast<int>(members.size()))) {
      const int who = members[pick];
      model::SequenceCall seq;
      if (who < 0) {
        slot = static_cast<int>(batch.size());
        row0 = rows;
        seq = {&state, tokens, call.all_positions, &logits, trace};
      } else {
        LiveCompanion& comp = *live[who];
        seq = {&comp.state, CompanionTokens(companions[who], comp, c), false, &comp.logits,
               nullptr};
      }
      rows += static_cast<int>(seq.tokens.size());
      batch.push_back(seq);
    }
    const int first_position = state.n_past;
    forward.RunBatch(batch);

    // The scenario's output rows: every row, or the last.
    const size_t outputs = call.all_positions ? tokens.size() : 1;
    if (logits.size() != outputs * vocab) {
      throw std::logic_error("forward pass returned " + std::to_string(logits.size()) +
                             " logits for " + std::to_string(outputs) + " rows of " +
                             std::to_string(vocab));
    }
    for (size_t r = 0; r < outputs; ++r) {
      const size_t t = call.all_positions ? r : tokens.size() - 1;
      StepResult step;
      step.index = static_cast<int>(summary.steps);
      step.kind = call.kind;
      step.position = first_position + static_cast<int>(t);
      step.input_token = tokens[t];
      step.logits = std::span<const float>(logits).subspan(r * vocab, vocab);
      const numerics::LogitHashes hashes = numerics::HashLogits(step.logits);
      step.fnv1a64 = hashes.fnv1a64;
      step.xxh3_64 = hashes.xxh3_64;
      step.nan_count = hashes.nan_count;
      step.inf_count = hashes.inf_count;
      step.argmax = model::Argmax(step.logits);
      step.token = model::SampleToken(scenario.sampler, step.logits,
                                      static_cast<uint64_t>(step.index), math);
      if (options.batch > 1) {
        step.batch =
            BatchPlace{static_cast<int>(batch.size()), rows, slot, row0 + static_cast<int>(t)};
      }
      last_token = step.token;
      sinks.on_step(step);
      ++summary.steps;
    }
    summary.positions += static_cast<int64_t>(tokens.size());
    if (trace != nullptr) {
      for (const TraceResult& record : trace_sink.records()) sinks.on_trace(record);
      trace_sink.records().clear();
    }

    // The companions decode greedily; one that ran its last call leaves.
    for (size_t m = 1; m < members.size(); ++m) {
      const CompanionPlan& companion = companions[members[m]];
      LiveCompanion& comp = *live[companion.id];
      if (sinks.on_companion) {
        sinks.on_companion(
            CompanionCall{companion.id, CompanionTokens(companion, comp, c), comp.logits});
      }
      comp.next = model::Argmax(comp.logits);
      if (c == companion.join + companion.decodes) live[companion.id].reset();
    }
  }
  return summary;
}

}  // namespace samebits::run
