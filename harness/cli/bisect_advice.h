// The `samebits bisect` command the gate (and `run`) print when a commit may
// have caused a difference: the same selection, store and references as the
// user's command, so it can be pasted as is.
#pragma once

#include <string>

#include "harness/cli/matrix_flags.h"

namespace samebits::cli {

// Returns "<samebits> bisect" followed by every flag of `flags` that differs
// from its default (--engine-profile, --db without its password,
// --references-dir, --scenarios-dir, --suite,
// --checkpoint, --scenario, --config, --threads, --math, --quant-dot,
// --timeout), each
// quoted for a shell. An --engine inside the current repository becomes the
// path bisect builds in each revision's worktree; one outside it is dropped
// (bisect builds its own engines).
std::string BisectCommandFor(const MatrixFlags& flags);

}  // namespace samebits::cli
