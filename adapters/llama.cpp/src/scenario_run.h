// A samebits scenario run through llama.cpp: its token sources resolved
// (ids, seeded random ids, text through llama.cpp's own tokenizer), its
// prefill, decode and extend steps fed whole or token by token beside the
// companions, and one `step` record (and dump row) per output row.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "companions.h"
#include "engine/protocol/records.h"
#include "engine/run/logit_dump.h"
#include "engine/run/scenario.h"
#include "llama_session.h"

namespace samebits::llamacpp {

// One step of the scenario with its tokens resolved.
struct ResolvedStep {
  run::ScenarioStep::Kind kind = run::ScenarioStep::Kind::kPrefill;
  std::vector<int32_t> tokens;  // prefill and extend
  int decode_count = 0;         // decode
  bool all_positions = false;
};

// Returns the scenario's steps with every token source resolved against
// `session`'s vocabulary. Throws InputError for ids outside it,
// Unsupported for a sampler other than greedy or text without a vocabulary.
std::vector<ResolvedStep> ResolveSteps(const run::Scenario& scenario, const LlamaSession& session);

// Returns how many positions the steps feed.
int Positions(const std::vector<ResolvedStep>& steps);
// Returns how many llama_decode calls the steps make, fed whole or not.
int Calls(const std::vector<ResolvedStep>& steps, bool whole);

class ScenarioRun {
 public:
  ScenarioRun(LlamaSession& session, Companions& companions, protocol::RecordWriter& writer,
              run::LogitDumpWriter* dump, bool whole)
      : session_(session), companions_(companions), writer_(writer), dump_(dump), whole_(whole) {}

  // Runs every step, writing its step records. Returns the `done` record's
  // figures (steps, times). Throws std::runtime_error when a call fails.
  protocol::Done Run(const std::vector<ResolvedStep>& steps);

 private:
  // Feeds `tokens` of kind `kind`; emits every row or the last.
  void Feed(const char* kind, const std::vector<int32_t>& tokens, bool every);
  // One llama_decode call of `own` (the scenario's rows) beside the
  // companions; emits the output rows among them.
  void Call(const char* kind, const std::vector<BatchRow>& own);
  void Emit(const char* kind, const BatchRow& row, std::span<const float> logits);

  LlamaSession& session_;
  Companions& companions_;
  protocol::RecordWriter& writer_;
  run::LogitDumpWriter* dump_;
  bool whole_;
  int call_ = 0;
  int position_ = 0;
  int index_ = 0;
  int32_t last_token_ = 0;
};

}  // namespace samebits::llamacpp
