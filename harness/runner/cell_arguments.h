// A cell's argv, built from its engine's profile (engine_profile.h) as for
// any engine: the configuration's name is read by the profile's grammar and
// its values fill the profile's argv templates. samebits-engine's cells
// (the default matrix, bisect's and bench's) are built this way from
// engines/samebits.json, whose `argv_order` keeps the command line the
// harness wrote by hand before, byte for byte.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// Returns the configuration `config.name` means to `profile`. Throws
// ConfigurationNameError when its grammar does not read the name.
EngineConfiguration ProfileConfiguration(const EngineProfile& profile,
                                         const harness::Configuration& config);

// Returns the engine's argv (without the program) for `cell` (its engine
// checkpoint and scenario file); with `dump_file`, the engine also writes
// its raw logits there. Throws ConfigurationNameError as
// ProfileConfiguration.
std::vector<std::string> EngineArguments(const EngineProfile& profile, const harness::Cell& cell,
                                         bool trace, const std::string& dump_file = "");

// The same argv in its two parts: what every cell of the configuration
// shares (the command's arguments, the configuration's, the trace's), and
// what is the cell's own (checkpoint, scenario, dump), which a shared child
// is sent per cell (shared_child.h). Throw as EngineArguments.
std::vector<std::string> ConfigurationArguments(const EngineProfile& profile,
                                                const harness::Configuration& config, bool trace);
std::vector<std::string> CellOwnArguments(const EngineProfile& profile, const harness::Cell& cell,
                                          const std::string& dump_file = "");

}  // namespace samebits::runner
