// Checking an engine profile beyond its parser (profile_check.h).
#include "harness/runner/profile_check.h"

#include "harness/analysis/results.h"
#include "harness/runner/matrix.h"
#include "harness/runner/profile_cell.h"
#include "harness/runner/profile_matrix.h"

namespace samebits::runner {
namespace {

// Returns "axis=value, ..." for a person.
std::string DescribeValues(const std::map<std::string, std::string>& values) {
  std::string out;
  for (const auto& [axis, value] : values) {
    if (!out.empty()) out += ", ";
    out += axis;
    out += "=";
    out += value;
  }
  return out;
}

// Returns what is wrong with `config`'s name, or "".
std::string RoundTripError(const EngineProfile& profile, const EngineConfiguration& config) {
  const auto reads_as = [&](const std::string& name, std::string* why) {
    try {
      const EngineConfiguration back = ParseConfigurationName(profile, name);
      if (back.values == config.values) return true;
      *why = "'" + name + "' reads back as " + DescribeValues(back.values);
    } catch (const ConfigurationNameError& e) {
      *why = "'" + name + "' does not read back: " + e.what();
    }
    return false;
  };
  std::string why;
  if (!reads_as(config.name, &why)) {
    return "configuration " + config.name + " (" + DescribeValues(config.values) + "): " + why;
  }
  const std::string written = FormatConfigurationName(profile, config.values);
  if (!reads_as(written, &why)) {
    return "configuration " + config.name + " (" + DescribeValues(config.values) +
           "): its name as the grammar writes it, " + why;
  }
  return "";
}

}  // namespace

std::vector<EngineConfiguration> DefaultRunConfigurations(const EngineProfile& profile) {
  if (profile.name != kOwnEngineName) return DefaultProfileConfigurations(profile);
  std::vector<EngineConfiguration> configs;
  for (const harness::Configuration& c : DefaultConfigurations(profile, {1, 2, 3}, {"portable"},
                                                               /*small_chunk_bytes=*/8192)) {
    configs.push_back(ParseConfigurationName(profile, c.name));
  }
  return configs;
}

std::string NameRoundTripError(const EngineProfile& profile,
                               const std::vector<EngineConfiguration>& configs) {
  std::vector<const EngineConfiguration*> all = {&profile.baseline, &profile.card_baseline};
  for (const EngineConfiguration& c : configs) all.push_back(&c);
  for (const EngineConfiguration* c : all) {
    if (std::string why = RoundTripError(profile, *c); !why.empty()) return why;
  }
  return "";
}

BaselineHello CheckBaselineHello(const EngineProfile& profile, const HelloCheckOptions& options) {
  ProfileCellOptions cell_options;
  cell_options.program = options.program;
  cell_options.timeout_seconds = options.timeout_seconds;
  const harness::CellResult result = RunProfileCell(profile, profile.baseline, options.checkpoint,
                                                    options.scenario_file, cell_options);
  BaselineHello check;
  check.configuration = profile.baseline.name;
  check.message = result.message;
  check.stderr_tail = result.stderr_tail;
  switch (result.code) {
    case harness::ResultCode::kPass:
      check.outcome = BaselineHello::Outcome::kOk;
      break;
    case harness::ResultCode::kUnsupported:
      check.outcome = BaselineHello::Outcome::kUnsupported;
      break;
    default:
      check.outcome = BaselineHello::Outcome::kFailed;
      if (check.message.empty()) check.message = harness::ResultCodeName(result.code);
      break;
  }
  return check;
}

}  // namespace samebits::runner
