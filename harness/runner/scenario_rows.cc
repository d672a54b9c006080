// Counting a scenario's output rows (scenario_rows.h).
#include "harness/runner/scenario_rows.h"

#include <stdexcept>

#include "harness/analysis/bounded_json.h"

namespace samebits::runner {
namespace {

using nlohmann::json;

// The engine's own limit on counts and lengths (scenarios/README.md).
constexpr int64_t kMaxCount = int64_t{1} << 20;

// Returns the number of tokens `source` feeds, or nothing for text (the
// tokenizer's) or a source this count does not understand.
std::optional<int64_t> SourceLength(const json& source) {
  if (!source.is_object()) return std::nullopt;
  if (const auto it = source.find("tokens"); it != source.end() && it->is_array())
    return static_cast<int64_t>(it->size());
  if (const auto it = source.find("random"); it != source.end() && it->is_object()) {
    const auto length = it->find("length");
    if (length != it->end() && length->is_number_integer() && *length >= 1 && *length <= kMaxCount)
      return length->get<int64_t>();
  }
  return std::nullopt;
}

// Returns the rows of a prefill or an extend of `source`.
std::optional<int64_t> FedRows(const json& step, const json& source) {
  const auto all = step.find("all_positions");
  if (all == step.end() || *all == false) return 1;
  if (!all->is_boolean()) return std::nullopt;
  return SourceLength(source);
}

}  // namespace

std::optional<int64_t> ScenarioOutputRows(const json& scenario) {
  if (!scenario.is_object()) return std::nullopt;
  const auto steps = scenario.find("steps");
  const auto prompt = scenario.find("prompt");
  if (steps == scenario.end() || !steps->is_array() || steps->empty()) return std::nullopt;
  int64_t rows = 0;
  for (const json& step : *steps) {
    if (!step.is_object()) return std::nullopt;
    std::optional<int64_t> these;
    if (step.contains("prefill") && prompt != scenario.end()) {
      these = FedRows(step, *prompt);
    } else if (const auto decode = step.find("decode"); decode != step.end()) {
      if (decode->is_number_integer() && *decode >= 1 && *decode <= kMaxCount)
        these = decode->get<int64_t>();
    } else if (const auto extend = step.find("extend"); extend != step.end()) {
      these = FedRows(step, *extend);
    }
    if (!these) return std::nullopt;
    rows += *these;
  }
  return rows;
}

std::optional<int64_t> ScenarioFileOutputRows(const std::string& path) {
  try {
    return ScenarioOutputRows(harness::ReadJsonFile(path, "scenario", harness::kMaxScenarioBytes));
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
}

}  // namespace samebits::runner
