#include "engine/run/driver.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "engine/model/sampler.h"
#include "engine/numerics/hash.h"

namespace samebits::run {
namespace {

// Returns this machine's physical memory in bytes, or 0 when unknown.
double PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size)
                                    : 0.0;
}

// Throws when the KV cache of `positions` positions (K and V, f32, every
// layer) alone would not fit in this machine's memory: better a clear error
// before the first token than std::bad_alloc or the OOM killer later.
void CheckKvCacheFits(int64_t positions, const model::ModelConfig& config,
                      const std::string& where) {
  const double bytes = 2.0 * config.n_layers() * static_cast<double>(positions) *
                       config.n_kv_heads * config.head_dim * sizeof(float);
  const double physical = PhysicalMemoryBytes();
  if (physical > 0 && bytes > physical) {
    throw ScenarioError(where + ": needs " + std::to_string(positions) +
                        " positions, whose KV cache for checkpoint " + config.name + " (" +
                        std::to_string(static_cast<int64_t>(bytes / (1 << 20))) +
                        " MiB) exceeds this machine's memory (" +
                        std::to_string(static_cast<int64_t>(physical / (1 << 20))) + " MiB)");
  }
}

// Returns the ids of `tokens`, or throws naming the first one outside the
// checkpoint's vocabulary.
std::vector<int32_t> CheckIds(std::vector<int32_t> tokens, const model::ModelConfig& config,
                              const std::string& where) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= config.vocab_size) {
      throw ScenarioError(where + ": token " + std::to_string(i) + " is " +
                          std::to_string(tokens[i]) + ", outside the vocabulary of checkpoint " +
                          config.name + " (" + std::to_string(config.vocab_size) + " ids)");
    }
  }
  return tokens;
}

// Returns the tokens of `source` for `config`'s vocabulary.
std::vector<int32_t> Resolve(const TokenSource& source, const model::ModelConfig& config,
                             const formats::Vocabulary* vocabulary, bool is_prompt,
                             const std::string& where) {
  switch (source.kind) {
    case TokenSource::Kind::kRandom:
      try {
        return RandomTokens(source.random, config.vocab_size);
      } catch (const std::invalid_argument& e) {
        throw ScenarioError(where + ": " + e.what() + " of checkpoint " + config.name);
      }
    case TokenSource::Kind::kTokens:
      return CheckIds(source.tokens, config, where);
    case TokenSource::Kind::kText:
      if (vocabulary == nullptr) break;
      {
        // A prompt starts a sequence, so it gets BOS; a chunk continues one.
        std::vector<int32_t> tokens = vocabulary->Tokenize(source.text, is_prompt);
        if (tokens.empty()) throw ScenarioError(where + ": the text gives no tokens");
        return CheckIds(std::move(tokens), config, where + " (tokenized text)");
      }
  }
  throw ScenarioError(where + ": a 'text' prompt needs a tokenizer, and checkpoint " + config.name +
                      " has no vocabulary; use 'tokens' or 'random' instead");
}

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

}  // namespace

PreparedScenario PrepareScenario(const Scenario& scenario, const model::ModelConfig& config,
                                 const formats::Vocabulary* vocabulary) {
  const std::string where = "scenario " + scenario.file;
  PreparedScenario prepared;
  prepared.scenario = &scenario;
  prepared.chunks.resize(scenario.steps.size());
  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    const ScenarioStep& step = scenario.steps[i];
    switch (step.kind) {
      case ScenarioStep::Kind::kPrefill:
        prepared.prompt = Resolve(scenario.prompt, config, vocabulary, true, where + ": prompt");
        prepared.total_positions += static_cast<int64_t>(prepared.prompt.size());
        prepared.total_steps +=
            step.all_positions ? static_cast<int64_t>(prepared.prompt.size()) : 1;
        break;
      case ScenarioStep::Kind::kDecode:
        prepared.total_positions += step.decode_count;
        prepared.total_steps += step.decode_count;
        break;
      case ScenarioStep::Kind::kExtend:
        prepared.chunks[i] =
            Resolve(step.chunk, config, vocabulary, false, where + ": step " + std::to_string(i));
        prepared.total_positions += static_cast<int64_t>(prepared.chunks[i].size());
        prepared.total_steps +=
            step.all_positions ? static_cast<int64_t>(prepared.chunks[i].size()) : 1;
        break;
    }
  }
  if (prepared.total_positions > config.max_seq_len) {
    throw ScenarioError(where + ": needs " + std::to_string(prepared.total_positions) +
                        " positions, more than the " + std::to_string(config.max_seq_len) +
                        " that checkpoint " + config.name +
                        " allows (its header's context length: GGUF <arch>.context_length, "
                        "config.json max_position_embeddings or llama2.c seq_len)");
  }
  CheckKvCacheFits(prepared.total_positions, config, where);
  return prepared;
}

RunSummary RunScenario(const PreparedScenario& prepared, const model::ModelConfig& config,
                       model::Forward& forward, const numerics::MathLibrary& math,
                       const DriverSinks& sinks) {
  const Scenario& scenario = *prepared.scenario;
  const size_t vocab = static_cast<size_t>(config.vocab_size);
  model::InferenceState state = model::MakeState(config);
  HashingTraceSink trace_sink;
  model::TraceSink* trace = sinks.on_trace ? &trace_sink : nullptr;
  std::vector<float> logits;
  RunSummary summary;
  int32_t last_token = 0;  // the token chosen at the latest output row

  // Feeds `tokens` and reports its output rows (every row or the last).
  const auto feed = [&](ScenarioStep::Kind kind, std::span<const int32_t> tokens,
                        bool all_positions) {
    const int first_position = state.n_past;
    forward.Run(state, tokens, all_positions, logits, trace);
    const size_t rows = all_positions ? tokens.size() : 1;
    if (logits.size() != rows * vocab) {
      throw std::logic_error("forward pass returned " + std::to_string(logits.size()) +
                             " logits for " + std::to_string(rows) + " rows of " +
                             std::to_string(vocab));
    }
    for (size_t r = 0; r < rows; ++r) {
      const size_t t = all_positions ? r : tokens.size() - 1;
      StepResult step;
      step.index = static_cast<int>(summary.steps);
      step.kind = kind;
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
      last_token = step.token;
      sinks.on_step(step);
      ++summary.steps;
    }
    summary.positions += static_cast<int64_t>(tokens.size());
    if (trace != nullptr) {
      for (const TraceResult& record : trace_sink.records()) sinks.on_trace(record);
      trace_sink.records().clear();
    }
  };

  for (size_t i = 0; i < scenario.steps.size(); ++i) {
    const ScenarioStep& step = scenario.steps[i];
    switch (step.kind) {
      case ScenarioStep::Kind::kPrefill:
        feed(step.kind, prepared.prompt, step.all_positions);
        break;
      case ScenarioStep::Kind::kDecode:
        for (int d = 0; d < step.decode_count; ++d) {
          const int32_t token = last_token;
          feed(step.kind, std::span<const int32_t>(&token, 1), false);
        }
        break;
      case ScenarioStep::Kind::kExtend:
        feed(step.kind, prepared.chunks[i], step.all_positions);
        break;
    }
  }
  return summary;
}

}  // namespace samebits::run
