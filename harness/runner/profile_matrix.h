// The matrix of an engine described by a profile (engine_profile.h): which
// configurations `run` and `gate --engine NAME` run by default, and the
// cells they make, each carrying the engine's name, its axis values, whether
// it is the baseline and whether the profile declares it to differ.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// One configuration that sets `axis` to `value` on a base configuration.
struct AxisVariant {
  std::string axis, value;
  EngineConfiguration config;
};

// Returns, in axis order, the configurations that each change one axis of
// `base`: to the values the profile's card lists for it, else, for an
// enumeration, to every other value; a range axis not listed is not varied
// (`notes`, when given, gets a line saying so).
std::vector<AxisVariant> OneAxisAtATime(const EngineProfile& profile,
                                        const EngineConfiguration& base,
                                        std::vector<std::string>* notes);

// Returns the configurations a run of the engine makes by default: the
// profile's `matrix.configurations`, else its baseline and then
// OneAxisAtATime from the baseline.
std::vector<EngineConfiguration> DefaultProfileConfigurations(const EngineProfile& profile);

// Returns the configuration of `profile` as the data model keeps it: named,
// with the engine's name, every axis's value, whether it is the baseline,
// the known difference declared for it on `checkpoint` (if any), and `math`
// and `quant_dot` from axes of those names when the profile has them.
harness::Configuration ProfileConfiguration(const EngineProfile& profile,
                                            const EngineConfiguration& config,
                                            const std::string& checkpoint,
                                            const std::string& scenario);

// Returns the cells of `checkpoints` x `scenario_files` x `configs`,
// checkpoint-major, with the scenarios identified (name and content hash).
std::vector<harness::Cell> ExpandProfileMatrix(const EngineProfile& profile,
                                               const std::vector<std::string>& checkpoints,
                                               const std::vector<std::string>& scenario_files,
                                               const std::vector<EngineConfiguration>& configs);

}  // namespace samebits::runner
