// A scenario replayed with another run's tokens (forced_scenario.h).
#include "harness/runner/forced_scenario.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/analysis/bounded_json.h"

namespace samebits::runner {

std::optional<std::string> ForcedTokenScenario(const std::string& scenario_json,
                                               const std::vector<harness::StepRecord>& a_steps,
                                               std::string* why) {
  const auto fail = [&](const std::string& reason) -> std::optional<std::string> {
    if (why != nullptr) *why = reason;
    return std::nullopt;
  };
  nlohmann::json scenario;
  try {
    scenario =
        harness::ParseBoundedJson(scenario_json, harness::LimitsForSize(scenario_json.size()));
  } catch (const std::runtime_error& e) {
    return fail(std::string("the scenario is not JSON with each key once: ") + e.what());
  }
  if (!scenario.is_object() || !scenario.contains("steps") || !scenario["steps"].is_array()) {
    return fail("the scenario is not a JSON object with a 'steps' list");
  }
  std::vector<int> fed;  // the tokens A fed at its decode rows, in order
  for (const harness::StepRecord& s : a_steps) {
    if (s.kind == "decode") fed.push_back(s.input_token);
  }
  size_t next = 0;
  nlohmann::json steps = nlohmann::json::array();
  for (const nlohmann::json& step : scenario["steps"]) {
    if (!step.is_object() || !step.contains("decode")) {
      steps.push_back(step);
      continue;
    }
    const nlohmann::json& count = step["decode"];
    if (!count.is_number_integer() || count.get<int64_t>() < 1) {
      return fail("a 'decode' step's count is not a positive integer");
    }
    for (int64_t i = 0; i < count.get<int64_t>(); ++i) {
      if (next == fed.size()) {
        return fail("A has " + std::to_string(fed.size()) +
                    " decode rows, fewer than the scenario's decode steps");
      }
      steps.push_back({{"extend", {{"tokens", {fed[next++]}}}}});
    }
  }
  if (next != fed.size()) {
    return fail("A has " + std::to_string(fed.size()) + " decode rows, the scenario " +
                std::to_string(next));
  }
  scenario["steps"] = std::move(steps);
  if (scenario.contains("name") && scenario["name"].is_string()) {
    scenario["name"] = scenario["name"].get<std::string>() + "-forced";
  }
  return scenario.dump(2) + "\n";
}

harness::CellResult RerunWithForcedTokens(
    const std::string& scenario_file, const harness::CellResult& a, const std::string& folder,
    const std::function<harness::CellResult(const std::string& forced_file)>& run) {
  harness::CellResult refused;
  refused.checkpoint = a.checkpoint;
  refused.scenario = a.scenario;
  refused.code = harness::ResultCode::kUnresolved;
  std::string text;
  try {
    text = harness::ReadBoundedFile(scenario_file, harness::kMaxScenarioBytes);
  } catch (const std::runtime_error& e) {
    refused.message = "cannot read the scenario " + scenario_file + ": " + e.what();
    return refused;
  }
  std::string why;
  const std::optional<std::string> forced = ForcedTokenScenario(text, a.steps, &why);
  if (!forced) {
    refused.message = "cannot force A's tokens on " + scenario_file + ": " + why;
    return refused;
  }
  const std::string forced_file =
      (std::filesystem::path(folder) /
       (std::filesystem::path(scenario_file).stem().string() + "-forced.json"))
          .string();
  std::ofstream out(forced_file, std::ios::binary | std::ios::trunc);
  out << *forced;
  out.close();
  if (!out) {
    refused.message = "cannot write " + forced_file;
    return refused;
  }
  return run(forced_file);
}

}  // namespace samebits::runner
