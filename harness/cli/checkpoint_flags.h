// Every command's `--checkpoint` values are checked in one place, before
// the command runs anything (issue 43, class 4): a file that is not there,
// or a `synthetic:` name the command's engine says it does not know
// (runner/known_checkpoints.h), is refused with exit 2, naming it (and the
// checkpoints the engine knows), before any cell runs or anything is stored.
//
// A command declares its checkpoint option where it adds it, with the
// engines it will give those checkpoints to:
//
//   DeclareCheckpoints(sub->add_option("--checkpoint", flags->checkpoints, "..."),
//                      [flags] { return EnginesOf(*flags); });
//
// main.cc then calls EnforceCheckpointRules on the command given, as it
// calls EnforcePathRules. tests/harness/cli_checkpoints_test.cc runs every
// command that takes --checkpoint with an unknown one and a missing file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

#include "harness/runner/known_checkpoints.h"

namespace samebits::cli {

// Returns the engines a command will run its checkpoints on, from its
// parsed flags; called only when a checkpoint was given. An engine that
// cannot be known before the command runs (a revision still to build, a
// profile to build with --build) is left out: its checkpoints fail at their
// first cell, as the engine says.
using CheckpointEngines = std::function<std::vector<runner::EngineToAsk>()>;

// Records that `option` holds checkpoint specs run by `engines`. Returns
// `option`.
CLI::Option* DeclareCheckpoints(CLI::Option* option, CheckpointEngines engines);

// Returns whether `option` was declared with DeclareCheckpoints.
bool DeclaresCheckpoints(const CLI::Option* option);

// Checks the checkpoints given to the parsed `command` (and its parsed
// subcommands) against the engines each declared. Throws UsageError
// (exit 2) naming every checkpoint refused.
void EnforceCheckpointRules(const CLI::App& command);

}  // namespace samebits::cli
