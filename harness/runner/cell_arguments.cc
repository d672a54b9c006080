// A cell's argv from its engine's profile (cell_arguments.h).
#include "harness/runner/cell_arguments.h"

#include "harness/runner/matrix.h"

namespace samebits::runner {

EngineConfiguration ProfileConfiguration(const EngineProfile& profile,
                                         const harness::Configuration& config) {
  return ParseConfigurationName(profile, config.name);
}

std::vector<std::string> EngineArguments(const EngineProfile& profile, const harness::Cell& cell,
                                         bool trace, const std::string& dump_file) {
  return BuildArguments(profile, ProfileConfiguration(profile, cell.config), EngineCheckpoint(cell),
                        cell.scenario_file, trace, dump_file);
}

std::vector<std::string> ConfigurationArguments(const EngineProfile& profile,
                                                const harness::Configuration& config, bool trace) {
  return BuildConfigurationArguments(profile, ProfileConfiguration(profile, config), trace);
}

std::vector<std::string> CellOwnArguments(const EngineProfile& profile, const harness::Cell& cell,
                                          const std::string& dump_file) {
  return BuildCellArguments(profile, ProfileConfiguration(profile, cell.config),
                            EngineCheckpoint(cell), cell.scenario_file, dump_file);
}

}  // namespace samebits::runner
