// Where two sequences of outputs (or of activation traces) first differ.
// Equality is bit equality of the hashes and equality of the tokens.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/numerics/hash.h"
#include "harness/analysis/results.h"

namespace samebits::harness {

struct StepDifference {
  int index = -1;  // the first step that differs (or the shorter length)
  std::string kind;
  int position = 0;
  std::string detail;  // "token 17 vs 18", "xxh3_64 ... vs ...", "9 steps vs 5"
};

// Returns the first difference between `a` and `b`, or nothing when they
// are equal step for step (index, kind, position, input token, token, both
// hashes) and of the same length.
std::optional<StepDifference> FirstStepDifference(const std::vector<StepRecord>& a,
                                                  const std::vector<StepRecord>& b);

struct TraceDifference {
  int position = 0;
  int layer = -1;
  std::string op;
  std::string detail;
};

// Returns the first trace record that differs between `a` and `b` (same
// place, different hash; or a different place, meaning the runs took
// different paths), or nothing when the traces are equal.
std::optional<TraceDifference> FirstTraceDifference(const std::vector<TraceRecord>& a,
                                                    const std::vector<TraceRecord>& b);

// Hashes are written as the engine writes them (engine/numerics/hash.h).
using numerics::Hex16;

}  // namespace samebits::harness
