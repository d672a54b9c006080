// Which engine a command drives: `--engine NAME` (the profile
// engines/NAME.json of the project), `--engine-profile FILE` (any profile),
// or `--engine PATH` (a program run under samebits-engine's own profile,
// as before profiles existed). One reading for run, gate, reference and card.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "harness/runner/engine_profile.h"

namespace samebits::cli {

// Returns the profile the flags name, or nullptr when they name none
// (`engine` empty, or a path to a program: it contains '/' or is a file).
// Throws UsageError for a name with no profile in <root>/engines, or a
// profile refused (its file, key and what was expected).
std::shared_ptr<const runner::EngineProfile> ChosenProfile(const std::string& engine,
                                                           const std::string& engine_profile);

// Whether `profile` is samebits-engine's own (engines/samebits.json), which
// the harness drives through its own matrix (the profile's, expanded with
// --threads and --math), references and flags.
bool IsOwnEngine(const runner::EngineProfile& profile);

// Returns samebits-engine's profile, <root>/engines/samebits.json: the
// default matrix is read from it. Throws UsageError when it is missing
// (this program run outside a source tree, whose root it finds from its
// own place or the current folder: there is no other copy of the matrix)
// or refused.
std::shared_ptr<const runner::EngineProfile> OwnEngineProfile();

// Adds --build (run the engine profile's `build` command before any child)
// to `sub`, storing into `build`.
void AddBuildFlag(CLI::App* sub, bool* build);

// When `build` is set, builds the engine `profile` describes
// (runner/profile_build.h) unless this process built it already, saying so
// on stderr; throws UsageError when the
// profile has no build command or the build fails. `profile` null (a
// program given by path): --build is refused, it has nothing to build with.
void BuildIfAsked(bool build, const runner::EngineProfile* profile);

}  // namespace samebits::cli
