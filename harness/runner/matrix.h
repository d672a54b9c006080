// The matrix: checkpoints x scenarios x configurations, expanded from
// samebits-engine's profile (engines/samebits.json: its `matrix` is the
// default matrix, as data) and narrowed by the selection flags. Pure
// functions of their inputs (the profile and the machine's ISAs are passed
// in), so tests can expand any matrix.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// The ISAs of {each:isa}: every value of the profile's `isa` axis but its
// default (samebits-engine's "auto", its own pick), in the axis's order, on
// every architecture: a machine lacking one still lists it, as
// UNSUPPORTED, so matrices from different machines line up. Read from the
// profile, not the kernel table, as for any engine; a test holds
// engines/samebits.json's axis to the table. Throws ProfileError when the
// profile has no `isa` axis.
std::vector<std::string> ProfileIsas(const EngineProfile& profile);

// The values of the profile's enumerated axis `name` (samebits-engine's
// `math` and `quant_dot`: the numeric profiles it runs, default first), as
// the profile lists them; `why` says what needs the axis. Throws
// ProfileError when the profile has no such enumerated axis.
std::vector<std::string> EnumeratedAxisValues(const EngineProfile& profile, const std::string& name,
                                              const std::string& why);

struct MatrixOptions {
  // samebits-engine's profile: the default checkpoints and configurations
  // (its `matrix`). Required.
  std::shared_ptr<const EngineProfile> profile;
  std::vector<std::string> checkpoints;     // empty: the profile's matrix.checkpoints
  std::vector<std::string> scenario_files;  // paths; must not be empty
  std::vector<std::string> configs;         // names to keep; empty: all
  std::vector<int> threads = {1, 2, 3};     // the cpu-tN configurations
  std::vector<std::string> math = {"portable"};
  std::vector<std::string> quant_dot = {"exact"};  // --quant-dot: exact, int8
  int64_t small_chunk_bytes = 8192;                // the cpu-tN-chunk8k configuration
};

// One child to run (a plain record of the data model, analysis/results.h,
// so the bench records the store keeps can name it).
using harness::Cell;

// Returns the configurations of `profile` (samebits-engine's) for
// `threads`, `math` profiles and `quant_dot` profiles, in matrix order: its
// `matrix.configurations` templates (matrix_template.h) expanded in order,
// the whole list once per math profile and, within it, once per quant_dot
// profile; a profile other than portable and exact suffixes every name
// (ProfileSuffix, analysis/numeric_profile.h: "cpu-t2-libm",
// "cpu-t2-b4-libm", "cpu-t2-int8", "cpu-t2-libm-int8"; harness/README.md,
// Configurations, says what engines/samebits.json lists and why). Each
// name is read by the profile's grammar into samebits-engine's fields
// (kernels, threads, isa, ...). Throws ProfileError (file, key, what was
// expected) when the profile has no such list, or a name it expands to is
// not one of its configurations or lacks one of samebits-engine's axes;
// std::invalid_argument for no thread count.
std::vector<harness::Configuration> DefaultConfigurations(
    const EngineProfile& profile, const std::vector<int>& threads,
    const std::vector<std::string>& math, int64_t small_chunk_bytes,
    const std::vector<std::string>& quant_dot = {"exact"});

// Returns the configuration `name` means to samebits-engine: read by its
// profile's grammar (any name it reads: `cpu-t4` whatever --threads says)
// into samebits-engine's fields (kernels, threads, isa, ...). Throws
// ConfigurationNameError when the grammar does not read it, ProfileError
// when the profile lacks one of samebits-engine's axes.
harness::Configuration OwnEngineConfiguration(const EngineProfile& profile,
                                              const std::string& name);

// Returns the scenario name of a scenario file: its stem ("classic" for
// scenarios/classic.json).
std::string ScenarioName(const std::string& path);

// Returns the cells, checkpoint-major then scenario then configuration,
// every one runnable as far as the profile knows: which ISAs the engine
// lacks here is the engine's to say (unavailable.h). A configuration named
// is one of the profile's matrix, or any the profile's grammar reads
// (`cpu-t4` whatever `threads` holds) whose numeric profile is selected.
// Throws std::invalid_argument for a selection that names an unknown
// configuration or leaves nothing to run, listing what is known, and
// ProfileError for a profile whose matrix cannot be expanded.
std::vector<Cell> ExpandMatrix(const MatrixOptions& options);

// Returns the order in which to start the cells: the most expensive first
// (by a static guess from the checkpoint's name and the configuration), so
// that with a job limit the long children do not start last and leave the
// other cores idle at the end. Only the order of starting changes; results
// stay in matrix order.
std::vector<size_t> StartOrder(const std::vector<Cell>& cells);

// Returns the spec the engine is given for a cell's checkpoint.
const std::string& EngineCheckpoint(const Cell& cell);

// Returns the file name of a cell's raw logit dump (store::DumpFileName of
// its checkpoint, scenario and configuration name).
std::string DumpFileName(const Cell& cell);

}  // namespace samebits::runner
