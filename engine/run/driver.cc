#include "engine/run/driver.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "engine/run/batch_driver.h"

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
        // A prompt starts a sequence, so it gets BOS when the vocabulary
        // says sequences do (`tokenizer.ggml.add_bos_token`); a chunk
        // continues one.
        std::vector<int32_t> tokens =
            vocabulary->Tokenize(source.text, is_prompt && vocabulary->add_bos());
        if (tokens.empty()) throw ScenarioError(where + ": the text gives no tokens");
        return CheckIds(std::move(tokens), config, where + " (tokenized text)");
      }
  }
  throw ScenarioError(where + ": a 'text' prompt needs a tokenizer, and checkpoint " + config.name +
                      " has no vocabulary; use 'tokens' or 'random' instead");
}

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
  return RunBatchedScenario(prepared, config, forward, math, BatchOptions{}, sinks);
}

}  // namespace samebits::run
