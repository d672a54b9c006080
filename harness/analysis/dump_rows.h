// The one rule binding a raw logit dump to the step records beside it: row
// `r` of the dump must hash (the protocol's FNV-1a 64 and XXH3-64,
// engine/numerics/hash.h) to step `r`'s hashes. A bundle's carried rows
// (exchange/bundle_dumps.h) and a live engine's dump (runner/engine_claims.h)
// are both held to it, so a dump can never show other logits than the
// hashes the comparison judged.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "harness/analysis/results.h"
#include "harness/analysis/ulp.h"

namespace samebits::harness {

// Returns "" when `row` hashes to `step`'s hashes, else what differs
// ("xxh3_64 X vs the step's Y").
std::string RowHashMismatch(std::span<const float> row, const StepRecord& step);

// Returns "" when every row of `dump` hashes to the step at its index in
// `steps`, else which row does not and what differs ("row 3 does not hash
// to its step (xxh3_64 X vs the step's Y)"). `dump` must have as many rows
// as `steps` has records.
std::string DumpRowsMismatch(const LogitDump& dump, const std::vector<StepRecord>& steps);

}  // namespace samebits::harness
