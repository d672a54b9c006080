// Running one cell of an engine profile (profile_cell.h).
#include "harness/runner/profile_cell.h"

#include <nlohmann/json.hpp>

#include "harness/analysis/bounded_json.h"
#include "harness/runner/cell_runner.h"
#include "harness/runner/matrix.h"
#include "harness/runner/scenario_identity.h"

namespace samebits::runner {
namespace {

// Returns the first line of `text` parsed as JSON (the hello record, which
// the transcript reader accepted already), or null.
nlohmann::json FirstLine(const std::string& text) {
  try {
    const std::string line = text.substr(0, text.find('\n'));
    return harness::ParseBoundedJson(line, harness::LimitsForSize(line.size()));
  } catch (const std::runtime_error&) {
    return nullptr;
  }
}

// Runs `config` of `profile` as the child of `cell` and judges it.
harness::CellResult RunConfiguration(const EngineProfile& profile,
                                     const EngineConfiguration& config, const Cell& cell,
                                     const ProfileCellOptions& options,
                                     harness::MachineInfo* platform) {
  const std::string& checkpoint = EngineCheckpoint(cell);
  ChildSpec spec;
  spec.program = options.program;
  spec.args = BuildArguments(profile, config, checkpoint, cell.scenario_file, options.trace,
                             options.dump_file);
  spec.env = ChildEnvironment({}, options.passthrough);
  spec.timeout_seconds = options.timeout_seconds;
  const HelloCheck echo = [&](const protocol::Transcript& t, const std::string& stdout_text) {
    if (t.hello->config.checkpoint != checkpoint) {
      return "the engine ran another checkpoint than asked: " + t.hello->config.checkpoint +
             " (asked " + checkpoint + ")";
    }
    return ProfileEchoMismatch(profile, config, stdout_text);
  };
  return JudgeChildWith(cell, RunChild(spec), echo, platform, options.dump_file);
}

}  // namespace

std::string ProfileEchoMismatch(const EngineProfile& profile, const EngineConfiguration& config,
                                const std::string& stdout_text) {
  const std::string mismatch = HelloMismatch(profile, config, FirstLine(stdout_text));
  return mismatch.empty() ? mismatch
                          : "the engine's hello does not echo its configuration (" + profile.file +
                                "): " + mismatch;
}

harness::CellResult RunProfileCell(const EngineProfile& profile, const EngineConfiguration& config,
                                   const std::string& checkpoint, const std::string& scenario_file,
                                   const ProfileCellOptions& options,
                                   harness::MachineInfo* platform) {
  Cell cell;
  cell.checkpoint = checkpoint;
  cell.scenario_file = scenario_file;
  cell.scenario = ScenarioName(scenario_file);
  cell.scenario_xxh3 = ScenarioContentHash(scenario_file);
  cell.config.name = config.name;
  return RunConfiguration(profile, config, cell, options, platform);
}

harness::CellResult RunProfileCell(const EngineProfile& profile, const harness::Cell& cell,
                                   const ProfileCellOptions& options,
                                   harness::MachineInfo* platform) {
  return RunConfiguration(profile, ParseConfigurationName(profile, cell.config.name), cell, options,
                          platform);
}

}  // namespace samebits::runner
