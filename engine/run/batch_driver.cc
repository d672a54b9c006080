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

// Where the scenario's sequence sits in one call: its slot among the
// call's sequences, its first row, and the call's totals.
struct Placement {
  int sequences = 0;
  int rows = 0;
  int slot = 0;
  int row0 = 0;
};

// One batched run of the scenario's sequence beside its companions. Each
// call of the scenario is: the companions that join it enter, the
// sequences are laid out in the call's row order, the forward pass runs
// them together, the scenario's rows are reported, then the companions
// take their greedy tokens (and those at their end leave).
class BatchedRun {
 public:
  BatchedRun(const PreparedScenario& prepared, const model::ModelConfig& config,
             model::Forward& forward, const numerics::MathLibrary& math,
             const BatchOptions& options, const DriverSinks& sinks)
      : prepared_(prepared),
        config_(config),
        forward_(forward),
        math_(math),
        options_(options),
        sinks_(sinks),
        vocab_(static_cast<size_t>(config.vocab_size)),
        plan_(ScenarioCalls(prepared)),
        companions_(PlanCompanions(options, config, static_cast<int>(plan_.size()))),
        live_(companions_.size()),
        state_(model::MakeState(config)),
        trace_(sinks.on_trace ? &trace_sink_ : nullptr) {}

  RunSummary Run() {
    for (int c = 0; c < static_cast<int>(plan_.size()); ++c) {
      const ScenarioCall& call = plan_[c];
      const int32_t token = last_token_;
      const std::span<const int32_t> tokens = call.kind == ScenarioStep::Kind::kDecode
                                                  ? std::span<const int32_t>(&token, 1)
                                                  : call.tokens;
      JoinCompanions(c);
      const Placement place = LayOut(c, call, tokens);
      const int first_position = state_.n_past;
      forward_.RunBatch(batch_);
      ReportRows(call, tokens, first_position, place);
      summary_.positions += static_cast<int64_t>(tokens.size());
      FlushTrace();
      AdvanceCompanions(c);
    }
    return summary_;
  }

 private:
  // Sets `members_` to the sequences of call `c` before ordering (-1 is the
  // scenario's), giving each companion that joins here a fresh state.
  void JoinCompanions(int c) {
    members_.assign(1, -1);
    for (const CompanionPlan& companion : companions_) {
      if (!companion.Active(c)) continue;
      if (c == companion.join) live_[companion.id].emplace().state = model::MakeState(config_);
      members_.push_back(companion.id);
    }
  }

  // Lays the sequences out in this call's row order; returns where the
  // scenario's sequence sits.
  Placement LayOut(int c, const ScenarioCall& call, std::span<const int32_t> tokens) {
    batch_.clear();
    Placement place;
    for (const int pick : RowOrder(options_, c, static_cast<int>(members_.size()))) {
      const int who = members_[pick];
      model::SequenceCall seq;
      if (who < 0) {
        place.slot = static_cast<int>(batch_.size());
        place.row0 = place.rows;
        seq = {&state_, tokens, call.all_positions, &logits_, trace_};
      } else {
        LiveCompanion& comp = *live_[who];
        seq = {&comp.state, CompanionTokens(companions_[who], comp, c), false, &comp.logits,
               nullptr};
      }
      place.rows += static_cast<int>(seq.tokens.size());
      batch_.push_back(seq);
    }
    place.sequences = static_cast<int>(batch_.size());
    return place;
  }

  // Reports the scenario's output rows of the call: every row, or the last.
  void ReportRows(const ScenarioCall& call, std::span<const int32_t> tokens, int first_position,
                  const Placement& place) {
    const size_t outputs = call.all_positions ? tokens.size() : 1;
    if (logits_.size() != outputs * vocab_) {
      throw std::logic_error("forward pass returned " + std::to_string(logits_.size()) +
                             " logits for " + std::to_string(outputs) + " rows of " +
                             std::to_string(vocab_));
    }
    for (size_t r = 0; r < outputs; ++r) {
      const size_t t = call.all_positions ? r : tokens.size() - 1;
      StepResult step;
      step.index = static_cast<int>(summary_.steps);
      step.kind = call.kind;
      step.position = first_position + static_cast<int>(t);
      step.input_token = tokens[t];
      step.logits = std::span<const float>(logits_).subspan(r * vocab_, vocab_);
      const numerics::LogitHashes hashes = numerics::HashLogits(step.logits);
      step.fnv1a64 = hashes.fnv1a64;
      step.xxh3_64 = hashes.xxh3_64;
      step.nan_count = hashes.nan_count;
      step.inf_count = hashes.inf_count;
      step.argmax = model::Argmax(step.logits);
      step.token = model::SampleToken(prepared_.scenario->sampler, step.logits,
                                      static_cast<uint64_t>(step.index), math_);
      if (options_.batch > 1) {
        step.batch =
            BatchPlace{place.sequences, place.rows, place.slot, place.row0 + static_cast<int>(t)};
      }
      last_token_ = step.token;
      sinks_.on_step(step);
      ++summary_.steps;
    }
  }

  // Passes the call's trace records on, after its steps.
  void FlushTrace() {
    if (trace_ == nullptr) return;
    for (const TraceResult& record : trace_sink_.records()) sinks_.on_trace(record);
    trace_sink_.records().clear();
  }

  // The companions decode greedily; one that ran its last call leaves.
  void AdvanceCompanions(int c) {
    for (size_t m = 1; m < members_.size(); ++m) {
      const CompanionPlan& companion = companions_[members_[m]];
      LiveCompanion& comp = *live_[companion.id];
      if (sinks_.on_companion) {
        sinks_.on_companion(
            CompanionCall{companion.id, CompanionTokens(companion, comp, c), comp.logits});
      }
      comp.next = model::Argmax(comp.logits);
      if (c == companion.join + companion.decodes) live_[companion.id].reset();
    }
  }

  const PreparedScenario& prepared_;
  const model::ModelConfig& config_;
  model::Forward& forward_;
  const numerics::MathLibrary& math_;
  const BatchOptions& options_;
  const DriverSinks& sinks_;
  const size_t vocab_;
  const std::vector<ScenarioCall> plan_;
  const std::vector<CompanionPlan> companions_;
  std::vector<std::optional<LiveCompanion>> live_;
  model::InferenceState state_;
  HashingTraceSink trace_sink_;
  model::TraceSink* trace_;
  std::vector<float> logits_;
  RunSummary summary_;
  int32_t last_token_ = 0;    // the token chosen at the scenario's latest output row
  std::vector<int> members_;  // the sequences of the current call before ordering
  std::vector<model::SequenceCall> batch_;
};

}  // namespace

RunSummary RunBatchedScenario(const PreparedScenario& prepared, const model::ModelConfig& config,
                              model::Forward& forward, const numerics::MathLibrary& math,
                              const BatchOptions& options, const DriverSinks& sinks) {
  return BatchedRun(prepared, config, forward, math, options, sinks).Run();
}

}  // namespace samebits::run
