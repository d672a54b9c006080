// Cell selection (selection.h).
#include "harness/runner/selection.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>

#include "harness/analysis/equivalence.h"
#include "harness/runner/profile_matrix.h"
#include "harness/runner/run_error.h"
#include "harness/runner/scenario_identity.h"
#include "harness/runner/suite.h"

namespace samebits::runner {
namespace {

namespace fs = std::filesystem;

std::string ScenariosDir(const Selection& s) {
  return s.scenarios_dir.empty() ? s.project_scenarios : s.scenarios_dir;
}

// Returns the scenario files of the folder (not its suite file), sorted.
std::vector<std::string> FolderScenarios(const std::string& dir) {
  std::vector<std::string> all;
  std::error_code ec;
  if (fs::is_directory(dir, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".json" && e.path().filename() != kSuiteFileName &&
          e.path().filename() != harness::kEquivalencesFileName) {
        all.push_back(e.path().string());
      }
    }
  }
  std::sort(all.begin(), all.end());
  return all;
}

// Refuses the scenario `name`, which the folder `dir` (holding `all`) lacks,
// listing the ones it holds.
[[noreturn]] void RefuseUnknownScenario(const std::string& name, const std::string& dir,
                                        const std::vector<std::string>& all) {
  std::string known;
  for (const std::string& f : all) known += (known.empty() ? "" : ", ") + ScenarioName(f);
  throw RunError("--scenario: no scenario named '" + name + "' in " + dir +
                 (known.empty() ? std::string(" (it holds none)") : " (known: " + known + ")"));
}

// Returns the scenario files the selection names (every one in the folder
// when it names none). Throws RunError for a name the folder lacks.
std::vector<std::string> ScenarioFiles(const Selection& s) {
  const std::string dir = ScenariosDir(s);
  std::vector<std::string> all = FolderScenarios(dir);
  if (s.scenarios.empty()) {
    if (all.empty()) {
      throw RunError("no scenarios: " + dir +
                     " holds no *.json files (pass --scenarios-dir or --scenario FILE)");
    }
    return all;
  }
  std::vector<std::string> chosen;
  std::error_code ec;
  for (const std::string& name : s.scenarios) {
    if (name.find('/') != std::string::npos || (name.size() > 5 && name.ends_with(".json"))) {
      if (!fs::is_regular_file(name, ec)) throw RunError("--scenario: no such file " + name);
      chosen.push_back(name);
      continue;
    }
    auto it = std::find_if(all.begin(), all.end(),
                           [&](const std::string& f) { return ScenarioName(f) == name; });
    if (it == all.end()) RefuseUnknownScenario(name, dir, all);
    chosen.push_back(*it);
  }
  return chosen;
}

// Returns the suite the selection uses: the one named, else the default
// suite when the scenarios folder is the project's and the file exists.
std::optional<Suite> SelectedSuite(const Selection& s) {
  std::error_code ec;
  if (!s.suite.empty()) return LoadSuite(s.suite);
  if (s.scenarios_dir.empty() && fs::is_regular_file(DefaultSuitePath(s), ec)) {
    return LoadSuite(DefaultSuitePath(s));
  }
  return std::nullopt;
}

// Returns the cells of an engine profile's matrix (Selection::profile).
std::vector<Cell> SelectProfileCells(const Selection& s) {
  const EngineProfile& profile = *s.profile;
  const std::vector<std::string> checkpoints =
      s.checkpoints.empty() ? profile.matrix_checkpoints : s.checkpoints;
  if (checkpoints.empty()) {
    throw RunError("no checkpoints: " + profile.file +
                   " lists none in matrix.checkpoints; pass --checkpoint");
  }
  if (!s.suite.empty()) {
    throw RunError("--suite names samebits-engine's checkpoints; with --engine " + profile.name +
                   " pass --checkpoint and --scenario");
  }
  const bool profile_scenarios =
      s.scenarios.empty() && s.scenarios_dir.empty() && !profile.matrix_scenarios.empty();
  std::vector<EngineConfiguration> configs;
  if (s.configs.empty()) {
    configs = DefaultProfileConfigurations(profile);
  } else {
    for (const std::string& name : s.configs) {
      try {
        configs.push_back(ParseConfigurationName(profile, name));
      } catch (const ConfigurationNameError& e) {
        throw RunError("--config " + name + ": not a configuration of " + profile.file + ": " +
                       e.what());
      }
    }
  }
  return ExpandProfileMatrix(profile, checkpoints,
                             profile_scenarios ? profile.matrix_scenarios : ScenarioFiles(s),
                             configs);
}

std::vector<Cell> SelectCellsOrThrow(const Selection& s) {
  if (s.profile) return SelectProfileCells(s);
  const bool default_selection =
      s.suite.empty() && s.checkpoints.empty() && s.scenarios.empty() && s.scenarios_dir.empty();
  MatrixOptions options;
  options.profile = s.own_profile;
  options.configs = s.configs;
  options.threads = s.threads;
  options.math = s.math;
  options.quant_dot = s.quant_dot;
  const std::optional<Suite> suite = SelectedSuite(s);
  // A --checkpoint file is relative to the working folder, as for every
  // command-line tool; cells are keyed by the file relative to the root
  // (ResolveCheckpoint). Without a suite given, a checkpoint naming a file
  // the default suite lists selects its pairs there (its scenarios live in
  // scenarios/real), so the commands the gate prints for one pair work.
  std::error_code ec;
  const std::string working = fs::current_path(ec).string();
  std::vector<std::string> matrix_checkpoints, suite_checkpoints;
  std::map<std::string, std::string> engine_specs;  // key -> the spec the engine gets
  for (const std::string& c : s.checkpoints) {
    const ResolvedCheckpoint r = ResolveCheckpoint(c, working, s.root);
    engine_specs[r.key] = r.engine_spec;
    const bool in_suite =
        !s.suite.empty() ||
        (suite && std::any_of(suite->pairs.begin(), suite->pairs.end(), [&](const SuitePair& p) {
           return ResolveSuiteCheckpoint(*suite, p, s.root).key == r.key;
         }));
    (in_suite ? suite_checkpoints : matrix_checkpoints).push_back(r.key);
  }
  std::vector<Cell> cells;
  if (s.suite.empty() && (s.checkpoints.empty() || !matrix_checkpoints.empty())) {
    options.checkpoints = matrix_checkpoints;
    options.scenario_files = ScenarioFiles(s);
    cells = ExpandMatrix(options);
    for (Cell& cell : cells) {
      const auto it = engine_specs.find(cell.checkpoint);
      if (it != engine_specs.end() && it->second != cell.checkpoint) {
        cell.engine_checkpoint = it->second;
      }
    }
  }
  if (suite && (!s.suite.empty() || default_selection || !suite_checkpoints.empty())) {
    std::vector<Cell> more =
        ExpandSuite(*suite, options, suite_checkpoints,
                    default_selection ? std::vector<std::string>{} : s.scenarios, s.root);
    for (Cell& c : more) cells.push_back(std::move(c));
  }
  IdentifyScenarios(cells);
  return cells;
}

}  // namespace

std::string DefaultSuitePath(const Selection& selection) {
  return (fs::path(selection.project_scenarios) / "real" / kSuiteFileName).string();
}

std::vector<Cell> SelectCells(const Selection& selection) {
  try {
    return SelectCellsOrThrow(selection);
  } catch (const std::invalid_argument& e) {
    // The matrix and suite expansions name what is wrong; a selection that
    // cannot be expanded is a run that cannot be made.
    throw RunError(e.what());
  } catch (const ProfileError& e) {
    throw RunError(std::string("engine profile refused: ") + e.what());
  }
}

Cell CellForResult(const harness::CellResult& r, const Selection& selection,
                   const std::vector<Cell>& selected) {
  for (const Cell& c : selected) {
    if (c.checkpoint == r.checkpoint && c.scenario == r.scenario &&
        c.config.name == r.config.name) {
      return c;
    }
  }
  Cell cell;
  cell.checkpoint = r.checkpoint;
  if (r.engine_checkpoint != r.checkpoint) cell.engine_checkpoint = r.engine_checkpoint;
  cell.scenario = r.scenario;
  cell.scenario_file = (fs::path(ScenariosDir(selection)) / (r.scenario + ".json")).string();
  for (const std::string& s : selection.scenarios) {
    if (ScenarioName(s) == r.scenario && fs::is_regular_file(s)) cell.scenario_file = s;
  }
  cell.scenario_xxh3 = ScenarioContentHash(cell.scenario_file);
  cell.config = r.config;
  return cell;
}

}  // namespace samebits::runner
