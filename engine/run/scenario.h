// Scenarios (scenarios/*.json, documented in scenarios/README.md): a prompt,
// a sampler and a list of steps (prefill, decode N, extend with a chunk).
// Parsing is strict: an unknown key, a wrong type or an impossible value is
// an error naming the file, the step and the problem, because a scenario
// that silently means something else would make every hash beside it lie.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/sampler.h"

namespace samebits::run {

// A scenario that cannot be parsed or cannot run against a checkpoint; the
// message starts with "scenario FILE: ".
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A seeded random token sequence: token `i` is drawn from the `i`-th output
// of splitmix64 seeded with `seed`, mapped into [first_token, vocab_size).
struct RandomTokenSpec {
  int length = 0;
  uint64_t seed = 0;
  // The lowest id drawn. The default skips ids 0..2, which are <unk>, <s> and
  // </s> in llama-family vocabularies.
  int first_token = 3;

  bool operator==(const RandomTokenSpec&) const = default;
};

// Where a prompt or an extend chunk comes from.
struct TokenSource {
  enum class Kind : uint8_t { kRandom, kTokens, kText };
  Kind kind = Kind::kTokens;
  RandomTokenSpec random;       // with kRandom
  std::vector<int32_t> tokens;  // with kTokens
  std::string text;             // with kText (needs the checkpoint's tokenizer)

  bool operator==(const TokenSource&) const = default;
};

struct ScenarioStep {
  enum class Kind : uint8_t { kPrefill, kDecode, kExtend };
  Kind kind = Kind::kPrefill;
  // Prefill and extend: emit a step for every fed position, not only the last.
  bool all_positions = false;
  int decode_count = 0;  // with kDecode: how many single-token steps
  TokenSource chunk;     // with kExtend

  bool operator==(const ScenarioStep&) const = default;
};

// Returns "prefill", "decode" or "extend".
const char* StepKindName(ScenarioStep::Kind kind);

struct Scenario {
  std::string name;
  std::string file;  // the label used in error messages (the path as given)
  TokenSource prompt;
  model::SamplerConfig sampler;  // greedy when the file names none
  std::vector<ScenarioStep> steps;
};

// Returns the scenario described by `json_text`. `file` names the source in
// error messages. Throws ScenarioError.
Scenario ParseScenario(std::string_view json_text, const std::string& file);

// Returns the scenario in the file at `path`. Throws ScenarioError (also
// when the file cannot be read).
Scenario LoadScenario(const std::string& path);

// Returns `spec.length` tokens of the seeded random sequence for a
// vocabulary of `vocab_size` ids. Throws std::invalid_argument when
// `first_token` is not below `vocab_size`.
std::vector<int32_t> RandomTokens(const RandomTokenSpec& spec, int vocab_size);

}  // namespace samebits::run
