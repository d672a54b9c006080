// Running one cell of an engine described by a profile (engine_profile.h):
// the child's arguments are built from the profile's templates, its hello
// is checked by the profile's echo and the protocol's checkpoint echo, and
// everything else is judged as for any child (cell_runner.h): a crash, a
// hang, garbage or a missing `done` is never a pass, and only an
// `unsupported` record makes a cell UNSUPPORTED.
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/runner/child.h"
#include "harness/runner/engine_profile.h"

namespace samebits::runner {

struct ProfileCellOptions {
  std::string program;  // the engine (ResolveProgram, or a path given instead)
  double timeout_seconds = 120;
  bool trace = false;
  // When not empty, the child writes its raw logits to this file (the
  // profile's `dump_logits`); a cell that passes with one row per step gets
  // it as its `dump_path`.
  std::string dump_file;
  std::vector<std::string> passthrough = DefaultPassthrough();
};

// Returns the result of running `config` of `profile` on `checkpoint` and
// the scenario file `scenario_file`. The result's configuration is named by
// `config.name` (its other fields keep their defaults: an engine's
// parameters are the profile's axes, not samebits-engine's). When
// `platform` is given and the child said hello, it receives the machine the
// child described.
harness::CellResult RunProfileCell(const EngineProfile& profile, const EngineConfiguration& config,
                                   const std::string& checkpoint, const std::string& scenario_file,
                                   const ProfileCellOptions& options,
                                   harness::MachineInfo* platform = nullptr);

// Returns the result of running a cell of the profile's matrix
// (profile_matrix.h): its configuration is parsed back from its name, and
// the result keeps the cell's configuration (engine, axis values, baseline,
// known difference). When `platform` is given and the child said hello, it
// receives the machine the child described.
harness::CellResult RunProfileCell(const EngineProfile& profile, const harness::Cell& cell,
                                   const ProfileCellOptions& options,
                                   harness::MachineInfo* platform = nullptr);

// Returns why the hello that begins `stdout_text` (a child's whole stdout)
// does not echo what `profile` promises for `config`, or "" when it does.
// Both kinds of engine check it: any profile's cells, and samebits-engine's
// on top of the fields of its Configuration, so an axis added to
// engines/samebits.json is checked with nothing added to the harness.
std::string ProfileEchoMismatch(const EngineProfile& profile, const EngineConfiguration& config,
                                const std::string& stdout_text);

}  // namespace samebits::runner
