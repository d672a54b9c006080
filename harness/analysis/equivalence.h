// Equivalent scenarios: two scenarios declared to give the same bits at the
// positions they share (one extend of 6 tokens versus six single-token
// extends, say), which the gate checks for every checkpoint and
// configuration that ran both. Chunking must not change a row's bits
// (DESIGN.md), so a difference is a FAIL with its own diagnosis kind
// (scenarios-differ), naming both scenarios and the first position that
// differs.
//
// Declared in JSON, in a suite file (scenarios/real/suite.json) or in
// `equivalences.json` in a scenarios folder, under the key "equivalences":
//
//   {"equivalences": [{"scenarios": ["extend-6", "extend-1x6"],
//                      "why": "one chunk of 6 tokens or six of 1"}]}
//
// Scenario names are compared with the cells' scenario names (a file's stem).
#pragma once

#include <string>
#include <vector>

#include "harness/analysis/results.h"

namespace samebits::harness {

struct ScenarioEquivalence {
  std::string a, b;  // scenario names
  std::string why;   // optional, for a person
};

// The file in a scenarios folder that declares its equivalences; a folder
// listing skips it (it is not a scenario).
inline constexpr const char* kEquivalencesFileName = "equivalences.json";

// Returns the equivalences declared in the JSON file `path` under the key
// "equivalences" (none when the file has no such key). Throws
// std::invalid_argument naming the file and the entry for an unreadable
// file, invalid JSON, or an entry that is not two different non-empty names.
std::vector<ScenarioEquivalence> LoadEquivalences(const std::string& path);

// Checks every equivalence on the cells of `run` that ran (PASS or FAIL):
// for each checkpoint x configuration that ran both scenarios, the steps at
// the positions both have must carry the same hashes. The cell of the
// second scenario that differs becomes FAIL with a message naming the first
// scenario and the position. Returns a diagnosis of kind kScenariosDiffer
// with a headline when any differ (else no headline); its details are one
// line per equivalence x checkpoint, rolled up over configurations.
Diagnosis CheckEquivalences(RunResult& run, const std::vector<ScenarioEquivalence>& equivalences);

}  // namespace samebits::harness
