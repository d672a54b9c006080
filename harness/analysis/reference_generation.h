// Making references from a run (`samebits reference generate`): whether a
// run may serve, the groups it yields, and how they meet the files already
// committed.
#pragma once

#include <map>
#include <string>

#include "harness/analysis/references.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

// Returns why the run cannot serve as a reference, one indented line per
// reason, or "" when it can: every child must have run to completion, every
// configuration must agree, and they must report one math library.
std::string WhyNotAReference(const RunResult& run);

// Returns the run's outputs as reference groups, by key: each agreement
// group's baseline steps, with the math library and engine revision (with
// "-dirty" when its tree was). Throws ReferenceError when cells of one
// profile report different math libraries. Empty when no cell ran.
std::map<std::string, ReferenceGroup> ReferenceGroupsFromRun(const RunResult& run);

// Returns whether `group` and `old` were made with the same math library.
bool SameMathLibrary(const ReferenceGroup& group, const ReferenceGroup& old);

// Adds to `group` the lines of `old` for pairs (checkpoint, scenario) that
// `group` does not cover, so a run over part of the matrix keeps the rest.
void KeepUncoveredPairs(ReferenceGroup& group, const ReferenceGroup& old);

// Returns whether writing `group` over `old` would change nothing but the
// revision line.
bool OnlyRevisionDiffers(const ReferenceGroup& group, const ReferenceGroup& old);

}  // namespace samebits::harness
