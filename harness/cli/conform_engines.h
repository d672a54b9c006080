// Engines as operands of `samebits conform` (`engine:NAME` or
// `engine:FILE`): instead of stored rows, the engine's configuration is run
// on the checkpoints and scenarios asked for, with logit dumps, and its
// cells are measured like a stored run's. An engine given as B can also be
// rerun with A's tokens forced where the two continuations diverge
// (runner/forced_scenario.h), so every step is compared.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/analysis/run_conformance.h"
#include "harness/runner/engine_profile.h"

namespace samebits::cli {

struct EngineOperand {
  std::shared_ptr<const runner::EngineProfile> profile;
  std::string program;  // the profile's command, resolved
  runner::EngineConfiguration config;
  std::string label;  // "engine llama.cpp (t1)"
};

// Returns the engine `which` names (`engine:NAME`: engines/NAME.json;
// `engine:FILE`: any profile) in configuration `config_name` (empty: the
// profile's baseline), or nothing when `which` does not start with
// `engine:`. With `build`, runs the profile's build command first
// (engine_choice.h BuildIfAsked). Throws UsageError for an unknown engine, a
// refused profile, a failed build, a missing program or a configuration
// name the profile does not parse.
std::optional<EngineOperand> ParseEngineOperand(const std::string& which,
                                                const std::string& config_name, bool build);

struct EngineRunOptions {
  std::vector<std::string> checkpoints;     // as the engine takes them
  std::vector<std::string> scenario_files;  // paths
  double timeout_seconds = 120;
  std::string dump_dir;  // an existing folder for the logit dumps
};

// Runs `engine` on every checkpoint x scenario, each a child of its own
// with a logit dump named after `side`, and returns the cells as a run.
harness::RunResult RunEngineOperand(const EngineOperand& engine, const EngineRunOptions& options,
                                    const std::string& side);

// Returns ConformOptions::rerun_b_forced for B = `engine`: its cell rerun on
// the scenario of A's cell with A's tokens forced.
std::function<harness::CellResult(const harness::CellResult&, const harness::CellResult&)>
ForcedRerunOf(const EngineOperand& engine, const EngineRunOptions& options);

}  // namespace samebits::cli
