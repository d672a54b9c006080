// How many output rows a scenario asks for, so that the harness can check
// an engine's claim of how many steps it ran (engine_claims.h): a child
// that reports fewer rows than its scenario holds (none at all, or half)
// would otherwise be judged on what it chose to print. The rule is
// scenarios/README.md's: a prefill or an extend emits one row, or one per
// fed position with `"all_positions": true`; `{"decode": N}` emits N.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace samebits::runner {

// Returns the number of output rows of the scenario `scenario`, or nothing
// when it cannot be known without the checkpoint (text whose every
// position is a row: its length is the tokenizer's) or `scenario` is not
// a scenario this count understands (the engine then reports its error).
std::optional<int64_t> ScenarioOutputRows(const nlohmann::json& scenario);

// Returns ScenarioOutputRows of the scenario file at `path`, read by the
// harness's JSON reader, or nothing when it cannot be read (the engine
// then reports that itself).
std::optional<int64_t> ScenarioFileOutputRows(const std::string& path);

}  // namespace samebits::runner
