// The flags of the commands that build git revisions (`bench` with revision
// sides, `bisect`): --build, --repo and --cache-dir, declared once and
// resolved the same way. Each command names the engine a build leaves with
// its own flag (bisect's --engine, bench's --built-engine).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "harness/runner/revision_build.h"

namespace samebits::cli {

// Adds --build, --repo and --cache-dir to `sub`, writing into `build`; the
// repository folder an input, the cache folder an output for the output
// guard. `revision` names what is built in the help texts ("a revision",
// "a revision side").
void AddRevisionBuildFlags(CLI::App* sub, runner::RevisionBuildOptions& build,
                           const std::string& revision);

// Returns `build` with its cache folder's default filled in: builds/ in the
// store's side folder (StoreSideFolder: beside an SQLite file).
runner::RevisionBuildOptions WithDefaultCacheDir(runner::RevisionBuildOptions build,
                                                 const std::string& db);

}  // namespace samebits::cli
