// A scenario is stored and referenced by its name (its file's stem), so two
// different files with one name would be taken for one scenario: a run of
// another folder's `classic` compared against this one's. Each cell carries
// the XXH3-64 of its scenario file's bytes, stored with the run, so `diff`
// and `compare` can tell two scenarios under one name apart; within one run
// two different files with one name are refused.
#pragma once

#include <string>
#include <vector>

#include "harness/runner/matrix.h"

namespace samebits::runner {

// Returns the XXH3-64 (seed 0) of the file's bytes as 16 lower-case hex
// digits, or "" when it cannot be read as a regular file of at most 16 MiB
// (the engine then reports that cell's error itself).
std::string ScenarioContentHash(const std::string& path);

// Throws RunError naming the file and the problem when the scenario at
// `path` exists but is not a JSON document the harness's reader takes
// (analysis/bounded_json.h: larger than its limit, a key twice in one
// object, not JSON): the engine would read it otherwise than a reviewer.
// A missing file is left to the engine to report.
void RefuseUnreadableScenario(const std::string& path);

// Sets each cell's `scenario_xxh3`, after RefuseUnreadableScenario on each
// file. Throws RunError naming both files when two scenario files with one
// name differ in content.
void IdentifyScenarios(std::vector<Cell>& cells);

}  // namespace samebits::runner
