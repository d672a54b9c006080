// Engines as operands of `samebits conform` (conform_engines.h).
#include "harness/cli/conform_engines.h"

#include <map>

#include "harness/cli/commands.h"
#include "harness/cli/engine_choice.h"
#include "harness/runner/forced_scenario.h"
#include "harness/runner/matrix.h"
#include "harness/runner/profile_cell.h"

namespace samebits::cli {

std::optional<EngineOperand> ParseEngineOperand(const std::string& which,
                                                const std::string& config_name, bool build) {
  const std::string prefix = "engine:";
  if (which.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string named = which.substr(prefix.size());
  if (named.empty()) throw UsageError("'" + which + "': name an engine after 'engine:'");
  // A name has no '/' and is not a file; anything else is a profile file.
  const bool is_file = named.find('/') != std::string::npos || named.ends_with(".json");
  EngineOperand engine;
  engine.profile = is_file ? ChosenProfile("", named) : ChosenProfile(named, "");
  if (engine.profile == nullptr) throw UsageError("'" + which + "' names no engine profile");
  BuildIfAsked(build, engine.profile.get());
  try {
    engine.program = runner::ResolveProgram(*engine.profile);
    engine.config = config_name.empty()
                        ? engine.profile->baseline
                        : runner::ParseConfigurationName(*engine.profile, config_name);
  } catch (const runner::ProfileError& e) {
    throw UsageError(which + ": " + e.what());
  } catch (const runner::ConfigurationNameError& e) {
    throw UsageError(which + ": " + e.what());
  }
  engine.label = "engine " + engine.profile->name + " (" + engine.config.name + ")";
  return engine;
}

namespace {

runner::ProfileCellOptions CellOptions(const EngineOperand& engine, const EngineRunOptions& options,
                                       const std::string& dump_name) {
  runner::ProfileCellOptions o;
  o.program = engine.program;
  o.timeout_seconds = options.timeout_seconds;
  if (!engine.profile->dump_logits.empty()) o.dump_file = options.dump_dir + "/" + dump_name;
  return o;
}

}  // namespace

harness::RunResult RunEngineOperand(const EngineOperand& engine, const EngineRunOptions& options,
                                    const std::string& side) {
  harness::RunResult run;
  int n = 0;
  for (const std::string& checkpoint : options.checkpoints) {
    for (const std::string& scenario_file : options.scenario_files) {
      const std::string dump = side + "-" + std::to_string(n++) + ".f32";
      run.cells.push_back(runner::RunProfileCell(*engine.profile, engine.config, checkpoint,
                                                 scenario_file,
                                                 CellOptions(engine, options, dump)));
    }
  }
  return run;
}

std::function<harness::CellResult(const harness::CellResult&, const harness::CellResult&)>
ForcedRerunOf(const EngineOperand& engine, const EngineRunOptions& options) {
  std::map<std::string, std::string> files;  // scenario name -> file
  for (const std::string& f : options.scenario_files) files[runner::ScenarioName(f)] = f;
  return [engine, options, files, n = 0](const harness::CellResult& a,
                                         const harness::CellResult& b) mutable {
    const auto file = files.find(a.scenario);
    if (file == files.end()) {
      harness::CellResult missing = b;
      missing.code = harness::ResultCode::kUnresolved;
      missing.message = "no scenario file named " + a.scenario + " was given";
      return missing;
    }
    return runner::RerunWithForcedTokens(
        file->second, a, options.dump_dir, [&](const std::string& forced_file) {
          harness::CellResult forced = runner::RunProfileCell(
              *engine.profile, engine.config, b.checkpoint, forced_file,
              CellOptions(engine, options, "forced-" + std::to_string(n++) + ".f32"));
          forced.scenario = a.scenario;
          return forced;
        });
  };
}

}  // namespace samebits::cli
