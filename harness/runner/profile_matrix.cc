// The matrix of an engine profile (profile_matrix.h).
#include "harness/runner/profile_matrix.h"

#include "harness/runner/matrix.h"
#include "harness/runner/scenario_identity.h"

namespace samebits::runner {

std::vector<AxisVariant> OneAxisAtATime(const EngineProfile& profile,
                                        const EngineConfiguration& base,
                                        std::vector<std::string>* notes) {
  std::vector<AxisVariant> variants;
  for (const EngineAxis& axis : profile.axes) {
    std::vector<std::string> values;
    if (const auto listed = profile.card_values.find(axis.name);
        listed != profile.card_values.end()) {
      values = listed->second;
    } else if (!axis.is_range) {
      values = axis.values;
    } else {
      if (notes != nullptr) {
        notes->push_back(axis.name +
                         ": not varied (a range; list the values to try in the profile's "
                         "card.values." +
                         axis.name + ")");
      }
      continue;
    }
    for (const std::string& value : values) {
      if (value == base.values.at(axis.name)) continue;
      AxisVariant v;
      v.axis = axis.name;
      v.value = value;
      v.config.values = base.values;
      v.config.values[axis.name] = value;
      v.config.name = FormatConfigurationName(profile, v.config.values);
      variants.push_back(std::move(v));
    }
  }
  return variants;
}

std::vector<EngineConfiguration> DefaultProfileConfigurations(const EngineProfile& profile) {
  if (!profile.matrix_configurations.empty()) return profile.matrix_configurations;
  std::vector<EngineConfiguration> configs = {profile.baseline};
  for (AxisVariant& v : OneAxisAtATime(profile, profile.baseline, nullptr)) {
    configs.push_back(std::move(v.config));
  }
  return configs;
}

harness::Configuration ProfileConfiguration(const EngineProfile& profile,
                                            const EngineConfiguration& config,
                                            const std::string& checkpoint,
                                            const std::string& scenario) {
  harness::Configuration c;
  c.name = config.name;
  c.engine = profile.name;
  c.params = config.values;
  c.baseline = config.name == profile.baseline.name;
  // Configurations are compared within one numeric profile (math and
  // quant_dot), as samebits-engine's are.
  if (const auto math = config.values.find("math"); math != config.values.end()) {
    c.math = math->second;
  }
  if (const auto dot = config.values.find("quant_dot"); dot != config.values.end()) {
    c.quant_dot = dot->second;
  }
  if (const KnownDifference* known =
          FindKnownDifference(profile, profile.baseline, config, checkpoint, scenario)) {
    // A declaration that names the baseline's own value would make the
    // baseline differ from itself; it is the profile's to avoid.
    if (!c.baseline) c.known_difference = known->reason;
  }
  return c;
}

std::vector<harness::Cell> ExpandProfileMatrix(const EngineProfile& profile,
                                               const std::vector<std::string>& checkpoints,
                                               const std::vector<std::string>& scenario_files,
                                               const std::vector<EngineConfiguration>& configs) {
  std::vector<harness::Cell> cells;
  for (const std::string& checkpoint : checkpoints) {
    for (const std::string& scenario_file : scenario_files) {
      for (const EngineConfiguration& config : configs) {
        harness::Cell cell;
        cell.checkpoint = checkpoint;
        cell.scenario_file = scenario_file;
        cell.scenario = ScenarioName(scenario_file);
        cell.config = ProfileConfiguration(profile, config, checkpoint, cell.scenario);
        cells.push_back(std::move(cell));
      }
    }
  }
  IdentifyScenarios(cells);
  return cells;
}

}  // namespace samebits::runner
