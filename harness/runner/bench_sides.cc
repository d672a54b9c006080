// The sides of `samebits bench A B` (bench_sides.h).
#include "harness/runner/bench_sides.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "harness/runner/git.h"
#include "harness/runner/matrix.h"
#include "harness/runner/run_error.h"
#include "harness/runner/unavailable.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

// Returns the configuration named `name` ("reference", "cpu-t2",
// "cpu-t3-chunk8k", "cpu-avx2", "cpu-t1-libm", "cpu-t2-int8", ...) as
// samebits-engine's profile's grammar reads it, or nullopt when it does not
// (the name is then an engine program or a revision).
std::optional<harness::Configuration> NamedConfiguration(const std::string& name,
                                                         const BenchSideOptions& options) {
  if (!options.own_profile) throw RunError("no samebits-engine profile to name configurations");
  try {
    return OwnEngineConfiguration(*options.own_profile, name);
  } catch (const ConfigurationNameError&) {
    return std::nullopt;
  } catch (const ProfileError& e) {
    throw RunError(std::string("engine profile refused: ") + e.what());
  }
}

// Returns the scenario file `options.scenario` names (a path, or a name in
// the scenarios folder).
std::string ScenarioFile(const BenchSideOptions& options) {
  std::error_code ec;
  const std::string& scenario = options.scenario;
  if (scenario.find('/') != std::string::npos || scenario.ends_with(".json")) {
    if (!fs::is_regular_file(scenario, ec)) throw RunError("--scenario: no such file " + scenario);
    return scenario;
  }
  std::string file = (fs::path(options.scenarios_dir) / (scenario + ".json")).string();
  if (!fs::is_regular_file(file, ec)) {
    throw RunError("--scenario: no scenario named '" + scenario + "' in " + options.scenarios_dir);
  }
  return file;
}

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// Returns the cell both sides run: the checkpoint, the scenario and the
// configuration program and revision sides run.
Cell BenchCell(const BenchSideOptions& options) {
  Cell cell;
  cell.checkpoint = options.checkpoint;
  cell.scenario_file = ScenarioFile(options);
  cell.scenario = ScenarioName(cell.scenario_file);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::string config_name =
      options.config.empty() ? "cpu-t" + std::to_string(cores) : options.config;
  auto config = NamedConfiguration(config_name, options);
  if (!config) throw RunError("--config: no configuration named '" + config_name + "'");
  cell.config = *config;
  return cell;
}

// Returns the engine of a configuration side, absolute.
std::string ConfigurationEngine(const BenchSideOptions& options) {
  if (!IsExecutableFile(options.engine)) {
    throw RunError("no engine program at " + options.engine + " (build it, or pass --engine)");
  }
  return fs::absolute(options.engine).string();
}

// Throws RunError when the side's engine says, in its capabilities probe,
// that it cannot run the side's configuration here (an ISA this machine
// lacks), before anything is timed or the other side is built. An engine
// whose probe does not answer (an old revision) is not refused here: its
// first round's `unsupported` stops the bench (ab_bench.h).
void RefuseUnavailableSide(const harness::BenchSide& side, const BenchSideOptions& options) {
  // Only an ISA can be unavailable (unavailable.h); "auto" is always there.
  if (side.cell.config.isa == "auto" || options.own_profile == nullptr ||
      options.own_profile->probe.empty()) {
    return;
  }
  std::string why;
  const std::optional<protocol::Capabilities> capabilities =
      ProbeEngine(side.engine, options.own_profile->probe, &why);
  if (!capabilities) return;
  if (const protocol::Unavailable* u = UnavailableValueOf(side.cell.config, *capabilities)) {
    throw RunError("this machine cannot run " + side.cell.config.name + ": " + u->reason);
  }
}

// Builds revision `spec` into `side` (its commit and engine).
void BuildRevisionSide(const std::string& spec, const BenchSideOptions& options,
                       harness::BenchSide& side) {
  RevisionBuildOptions build = options.build;
  try {
    build.repo = RepositoryRoot(build.repo.empty() ? fs::current_path().string() : build.repo);
    side.revision = ResolveCommit(build.repo, spec);
  } catch (const std::runtime_error& e) {
    throw RunError("'" + spec +
                   "' is neither an engine program, a configuration (such as cpu-t2) nor a "
                   "revision (" +
                   e.what() + ")");
  }
  if (options.progress) options.progress("building " + spec + " ...");
  const RevisionBuild built = BuildRevision(side.revision, build);
  if (!built.built) throw RunError("revision " + spec + " " + built.message);
  side.engine = built.engine;
}

}  // namespace

harness::BenchSide ResolveBenchSide(const std::string& spec, const BenchSideOptions& options) {
  harness::BenchSide side;
  side.label = spec;
  side.cell = BenchCell(options);
  if (IsExecutableFile(spec)) {
    // A program given by path is asked nothing beforehand (as in `run`):
    // its first round's `unsupported` stops the bench.
    side.engine = fs::absolute(spec).string();
    return side;
  }
  if (auto named = NamedConfiguration(spec, options)) {
    side.cell.config = *named;
    side.engine = ConfigurationEngine(options);
  } else {
    BuildRevisionSide(spec, options, side);
  }
  RefuseUnavailableSide(side, options);
  return side;
}

bool NamesConfigurationSide(const std::string& spec, const BenchSideOptions& options) {
  return !IsExecutableFile(spec) && NamedConfiguration(spec, options).has_value();
}

}  // namespace samebits::runner
