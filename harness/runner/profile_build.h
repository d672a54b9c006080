// Building an engine from its profile's `build` command (`--build` of run,
// gate, card and conform): an argv list run in the profile's folder, never
// through a shell, so a profile's value cannot add what it did not template.
#pragma once

#include <string>

#include "harness/runner/engine_profile.h"

namespace samebits::runner {

// Runs `profile.build` in the profile's folder (relative paths in it are
// relative to that folder, as the command's are), with this process's whole
// environment (revision_build.h BuildEnvironment), and returns its wall
// seconds. Throws ProfileError when the profile declares no build command,
// and std::runtime_error naming the command, its exit status and the tail of
// its output when it cannot start, fails, or runs past `timeout_seconds`.
double BuildEngine(const EngineProfile& profile, double timeout_seconds = 3600);

}  // namespace samebits::runner
